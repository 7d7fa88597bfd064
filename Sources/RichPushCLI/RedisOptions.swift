import ArgumentParser
import Foundation
import Hiredis

/// The Redis connection options every subcommand shares.
struct RedisOptions: ParsableArguments {
    @Option(name: .customLong("redis-url"), help: ArgumentHelp(
        "Redis URL, redis://[user:password@]host[:port][/db] (env RICHPUSH_REDIS_URL; default \(RedisConfiguration.defaultURL)).",
        valueName: "url"))
    var redisURL: String?

    @Option(name: .customLong("redis-timeout"), help: "Seconds to wait for a Redis reply before dropping the connection.")
    var redisTimeout: Double = 5

    func configuration(clientName: String) throws -> RedisConfiguration {
        let url = redisURL ?? ProcessInfo.processInfo.environment["RICHPUSH_REDIS_URL"] ?? RedisConfiguration.defaultURL
        var configuration = try RedisConfiguration(url: url)
        if configuration.clientName == nil { configuration.clientName = clientName }
        configuration.commandTimeout = .milliseconds(Int(redisTimeout * 1000))
        return configuration
    }

    func validate() throws {
        guard redisTimeout > 0 else { throw ValidationError("--redis-timeout must be positive") }
        do {
            _ = try configuration(clientName: "richpush")
        } catch let error as RedisError {
            throw ValidationError(error.message)
        }
    }
}
