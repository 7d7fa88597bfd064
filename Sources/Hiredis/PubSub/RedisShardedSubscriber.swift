package import Logging
import Synchronization

/// Sharded Pub/Sub (`SSUBSCRIBE`, Redis 7) over one Redis or a Redis Cluster: one
/// ``RedisSubscriber`` per node that serves some of the channels, their messages merged.
///
/// On a cluster, a channel is served by the master of its slot. When a slot moves (a reshard:
/// the node drops its subscribers with `SUNSUBSCRIBE`) or a node stops answering (a failover),
/// ``run()`` reads the slot map again and subscribes the channels where they are served now,
/// then yields on ``restorations``: what was published meanwhile is gone, as after any Pub/Sub
/// reconnection, and a consumer that keeps missed messages elsewhere (the hub's held pushes)
/// reads them then.
package final class RedisShardedSubscriber: Sendable {
    package let messages: AsyncStream<RedisPubSubMessage>
    private let output: AsyncStream<RedisPubSubMessage>.Continuation
    /// One element after the subscriptions were restored or moved (see the type's documentation).
    package let restorations: AsyncStream<Void>
    private let restored: AsyncStream<Void>.Continuation
    private let locator: RedisNodeLocator
    private let logger: Logger
    private let checkInterval: Duration

    private struct Node {
        let subscriber: RedisSubscriber
        var channels: Set<String>
        let forwarding: Task<Void, Never>
    }
    private struct State {
        var wanted: Set<String> = []
        var nodes: [String: Node] = [:]
        var closed = false
    }
    private let state = Mutex(State())
    /// One (re)placement at a time.
    private let placing = AsyncSerial()

    package init(locator: RedisNodeLocator, checkInterval: Duration = .seconds(1), logger: Logger = Logger(label: "richpush.redis.pubsub"))
    {
        self.locator = locator
        self.logger = logger
        self.checkInterval = checkInterval
        (messages, output) = AsyncStream.makeStream(of: RedisPubSubMessage.self, bufferingPolicy: .unbounded)
        (restorations, restored) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Subscribes to `channels`, each on the node that serves it; returns once every node confirmed.
    package func ssubscribe(_ channels: [String]) async throws {
        state.withLock { $0.wanted.formUnion(channels) }
        _ = try await place()
    }

    /// Follows moved slots and failed nodes until ``close()``; on one Redis, it only passes on
    /// the subscriber's own restorations.
    ///
    /// Every `checkInterval` it looks for channels a node dropped or refused, a node that is
    /// down, or one that reconnected (a killed master restarted as a replica accepts `SSUBSCRIBE`,
    /// but `SPUBLISH` on the new master counts only its own subscribers); and every
    /// `verifyEvery` checks it compares the placement with a fresh slot map anyway, so no change
    /// of the map goes unseen for long.
    package func run(verifyEvery: Int = 5) async {
        var reconnections: [ObjectIdentifier: Int] = [:]
        var checks = 0
        while !state.withLock({ $0.closed }) {
            try? await Task.sleep(for: checkInterval)
            guard case .cluster = locator, !state.withLock({ $0.closed }) else { continue }
            checks += 1
            let nodes = state.withLock { Array($0.nodes.values) }
            let lost = nodes.flatMap { $0.subscriber.takeLostShardChannels() }
            let down = nodes.contains { !$0.subscriber.isConnected }
            var reconnected = false
            for node in nodes {
                let count = node.subscriber.reconnectCount
                if reconnections.updateValue(count, forKey: ObjectIdentifier(node.subscriber)) ?? 0 != count { reconnected = true }
            }
            guard !lost.isEmpty || down || reconnected || checks % max(verifyEvery, 1) == 0 else { continue }
            if !lost.isEmpty {
                state.withLock { state in
                    for key in state.nodes.keys { state.nodes[key]?.channels.subtract(lost) }
                }
            }
            await locator.invalidate()
            do {
                if try await place() {
                    logger.info(
                        "sharded subscriptions moved",
                        metadata: ["lost": "\(lost.count)", "nodeDown": "\(down)", "reconnected": "\(reconnected)"])
                    restored.yield()
                }
            } catch {
                logger.warning("cannot place sharded subscriptions yet", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Subscribes each wanted channel on the node that serves it now and leaves the nodes that
    /// serve none; returns whether anything moved.
    private func place() async throws -> Bool {
        try await placing.run {
            let wanted = state.withLock { Array($0.wanted) }
            let groups = try await locator.group(wanted)
            var moved = false
            var keep = Set<String>()
            for (configuration, channels) in groups {
                let key = "\(configuration.host):\(configuration.port)"
                keep.insert(key)
                let node = state.withLock { $0.nodes[key] } ?? startNode(key: key, configuration: configuration)
                let missing = Set(channels).subtracting(node.channels)
                let gone = node.channels.subtracting(channels)
                if !missing.isEmpty {
                    try await node.subscriber.ssubscribe(Array(missing))
                    moved = true
                }
                if !gone.isEmpty, node.subscriber.isConnected { try? await node.subscriber.sunsubscribe(Array(gone)) }
                state.withLock { $0.nodes[key]?.channels = Set(channels) }
            }
            let stale = state.withLock { state in
                let keys = state.nodes.keys.filter { !keep.contains($0) }
                return keys.compactMap { state.nodes.removeValue(forKey: $0) }
            }
            for node in stale {
                moved = true
                await node.subscriber.close(unsubscribeTimeout: .milliseconds(200))
            }
            return moved
        }
    }

    private func startNode(key: String, configuration: RedisConfiguration) -> Node {
        let subscriber = RedisSubscriber(configuration: configuration, logger: logger)
        let forwarding = Task { [output, restored] in
            await withDiscardingTaskGroup { group in
                group.addTask { for await message in subscriber.messages { output.yield(message) } }
                group.addTask { for await _ in subscriber.restorations { restored.yield() } }
            }
        }
        let node = Node(subscriber: subscriber, channels: [], forwarding: forwarding)
        state.withLock { $0.nodes[key] = node }
        return node
    }

    /// Unsubscribes everywhere, closes every connection, ends ``messages`` and ``restorations``.
    package func close() async {
        let nodes = state.withLock { state in
            state.closed = true
            defer { state.nodes = [:] }
            return Array(state.nodes.values)
        }
        for node in nodes {
            await node.subscriber.close()
            await node.forwarding.value
        }
        output.finish()
        restored.finish()
    }
}

/// Runs async operations one at a time, in call order.
actor AsyncSerial {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        while busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            busy = false
            if !waiting.isEmpty { waiting.removeFirst().resume() }
        }
        return try await operation()
    }
}
