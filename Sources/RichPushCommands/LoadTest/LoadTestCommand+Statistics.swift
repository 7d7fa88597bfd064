import Hiredis

extension LoadTestCommand {
    /// Starts Redis's statistics over on each of `urls` (`CONFIG RESETSTAT`, `SLOWLOG RESET`),
    /// once the devices are registered: the command counts the script reads afterwards are then
    /// the notifications' own, without the registrations'.
    static func resetStatistics(at urls: [String]) async throws {
        for url in urls {
            let connection = RedisConnection(configuration: try RedisConfiguration(url: url))
            do {
                // The SLOWLOG's reset first: a command is counted once it ran, so the counts keep
                // the second (cheap), not the first (the clearing of the registrations' entries:
                // tens of ms under --profile; scripts/lib/slowlog.py leaves its own entry out).
                _ = try await connection.pipeline([RedisCommand("SLOWLOG", "RESET"), RedisCommand("CONFIG", "RESETSTAT")]).map {
                    try $0.throwingError()
                }
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
        }
    }
}
