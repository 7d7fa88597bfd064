import Hiredis

extension LoadTestCommand {
    /// Starts Redis's statistics over on each of `urls` (`CONFIG RESETSTAT`, `SLOWLOG RESET`),
    /// once the devices are registered: the command counts the script reads afterwards are then
    /// the notifications' own, without the registrations'.
    static func resetStatistics(at urls: [String]) async throws {
        for url in urls {
            let connection = RedisConnection(configuration: try RedisConfiguration(url: url))
            do {
                _ = try await connection.pipeline([RedisCommand("CONFIG", "RESETSTAT"), RedisCommand("SLOWLOG", "RESET")]).map { try $0.throwingError() }
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
        }
    }
}
