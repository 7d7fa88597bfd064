package import Logging
package import NIOCore
import NIOPosix
import Synchronization

/// A fixed set of ``NIORedisConnection``s spread over the loops of an `EventLoopGroup`: each
/// request goes to the connection with the fewest commands waiting, as in ``RedisConnectionPool``.
///
/// A caller already running on one of the group's loops (inside
/// `withTaskExecutorPreference(connection)`, or a NIO handler) gets a connection of its own
/// loop when one is not backing off, so its round trip stays on that thread.
package final class NIORedisConnectionPool: RedisClient, Sendable {
    package let configuration: RedisConfiguration
    package let connections: [NIORedisConnection]
    private let cursor = Atomic<UInt>(0)

    package init(
        configuration: RedisConfiguration,
        size: Int = 4,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "richpush.redis")
    ) {
        self.configuration = configuration
        connections = (0..<max(1, size)).map { _ in
            NIORedisConnection(configuration: configuration, eventLoop: group.next(), logger: logger)
        }
    }

    package var size: Int { connections.count }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        try await leastLoaded().pipeline(commands)
    }

    /// Closes every connection.
    package func close() async {
        for connection in connections { await connection.close() }
    }

    private func leastLoaded() -> NIORedisConnection {
        let start = Int(cursor.wrappingAdd(1, ordering: .relaxed).newValue % UInt(connections.count))
        // Only a thread of an event loop can have a connection on its own loop; elsewhere the
        // check costs one thread-local read.
        guard MultiThreadedEventLoopGroup.currentEventLoop != nil else { return connections.leastLoaded(start: start) }
        return connections.leastLoaded(start: start) { $0.eventLoop.inEventLoop }
    }
}
