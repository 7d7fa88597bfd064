package import Logging
import Synchronization

/// A fixed set of ``RedisConnection``s shared by many tasks: each request goes to the connection
/// with the fewest commands waiting, where it is pipelined with the other requests waiting there.
///
/// Because every connection multiplexes, a pool of a few connections serves thousands of
/// concurrent tasks; more connections add parallelism in parsing and copying replies, not in
/// Redis itself, which is single-threaded. Blocking commands must not use a pool: give them a
/// ``RedisConnection`` of their own.
package final class RedisConnectionPool: RedisClient, Sendable {
    package let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let cursor = Atomic<UInt>(0)

    package init(configuration: RedisConfiguration, size: Int = 4, logger: Logger = Logger(label: "richpush.redis")) {
        self.configuration = configuration
        connections = (0..<max(1, size)).map { _ in RedisConnection(configuration: configuration, logger: logger) }
    }

    package var size: Int { connections.count }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        try await leastLoaded().pipeline(commands)
    }

    /// Closes every connection and joins their threads.
    package func close() async {
        for connection in connections { await connection.close() }
    }

    private func leastLoaded() -> RedisConnection {
        connections.leastLoaded(start: Int(cursor.wrappingAdd(1, ordering: .relaxed).newValue % UInt(connections.count)))
    }
}
