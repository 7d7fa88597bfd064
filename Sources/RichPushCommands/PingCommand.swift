import ArgumentParser
import Hiredis

/// `richpush ping`: checks that the configured Redis answers, and how fast.
struct PingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping", abstract: "Check that Redis answers (PING) and print the round-trip time.")

    @OptionGroup var redis: RedisOptions

    func run() async throws {
        let configuration = try redis.configuration(clientName: "richpush-ping")
        let connection: RedisConnection
        do {
            connection = try await RedisConnection.connect(configuration: configuration)
        } catch let error as RedisError {
            throw CLIError("cannot reach Redis at \(configuration.redactedURL): \(error.message)")
        }
        let clock = ContinuousClock()
        let elapsed = try await clock.measure { try await connection.send("PING") }
        let info = try await connection.send("INFO", "server").string ?? ""
        let version =
            info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("redis_version:") }?.dropFirst("redis_version:".count) ?? "?"
        await connection.close()
        print("PONG from \(configuration.redactedURL) (Redis \(version)) in \(elapsed)")
    }
}
