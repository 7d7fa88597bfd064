import Foundation
import Glibc
package import Logging
import Synchronization

/// A Pub/Sub connection that subscribes and unsubscribes at run time and delivers messages as an
/// `AsyncStream`; thousands of channels share its one socket.
///
/// Its thread waits in `poll` on the socket and on a wake-up pipe, so (un)subscribe requests go out
/// at once even while no message arrives, without read timeouts that would kill the hiredis
/// context. Each (un)subscribe call returns once Redis has confirmed it. After the connection
/// drops, the thread reconnects with back-off and subscribes again to everything it had; messages
/// published in the gap are lost, as with any Pub/Sub client.
package final class RedisSubscriber: Sendable {
    package let configuration: RedisConfiguration
    /// Every message received, in order. Unbounded: a consumer must keep up.
    package let messages: AsyncStream<RedisPubSubMessage>
    private let output: AsyncStream<RedisPubSubMessage>.Continuation
    /// One element each time Redis confirmed the subscriptions restored after a reconnection:
    /// from then on messages arrive again, and what was published in the gap is gone. A consumer
    /// that keeps state in Redis for missed messages (the simulated hub's held pushes) reads it here.
    package let restorations: AsyncStream<Void>
    private let restored: AsyncStream<Void>.Continuation
    private let logger: Logger
    private let inbox = Mutex(Inbox())
    private let wakePipe: (read: Int32, write: Int32)
    private let exited = DispatchSemaphore(value: 0)
    /// Times the connection was made again after a drop (for tests and metrics).
    private let reconnections = Atomic<Int>(0)
    private let connected = Atomic<Bool>(false)
    private let shardsUsed = Atomic<Bool>(false)
    /// Shard channels Redis unsubscribed on its own (their slot moved to another node).
    private let lostShards = Mutex<[String]>([])

    enum Kind: String, Sendable {
        case subscribe, unsubscribe, psubscribe, punsubscribe, ssubscribe, sunsubscribe
        var isPattern: Bool { self == .psubscribe || self == .punsubscribe }
        var isShard: Bool { self == .ssubscribe || self == .sunsubscribe }
        var adds: Bool { self == .subscribe || self == .psubscribe || self == .ssubscribe }
    }

    struct Operation {
        let kind: Kind
        let names: [String]
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct Inbox {
        var operations: [Operation] = []
        var closed = false
    }

    package init(configuration: RedisConfiguration, logger: Logger = Logger(label: "richpush.redis.pubsub")) {
        var subscriberConfiguration = configuration
        subscriberConfiguration.commandTimeout = nil  // poll decides when to read
        self.configuration = subscriberConfiguration
        self.logger = logger
        (messages, output) = AsyncStream.makeStream(of: RedisPubSubMessage.self, bufferingPolicy: .unbounded)
        (restorations, restored) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakePipe = (fds[0], fds[1])
        Thread { [self] in
            ThreadName.setCurrent("redis-pubsub")
            var loop = SubscriberLoop(owner: self)
            loop.run()
            exited.signal()
        }.start()
    }

    package func subscribe(_ channels: [String]) async throws { try await submit(.subscribe, channels) }
    package func unsubscribe(_ channels: [String] = []) async throws { try await submit(.unsubscribe, channels) }
    package func psubscribe(_ patterns: [String]) async throws { try await submit(.psubscribe, patterns) }
    package func punsubscribe(_ patterns: [String] = []) async throws { try await submit(.punsubscribe, patterns) }
    /// Sharded Pub/Sub (Redis 7): messages sent with `SPUBLISH`. On Redis Cluster all the
    /// channels must be served by this subscriber's node (``RedisShardedSubscriber`` sees to it);
    /// they are sent one `SSUBSCRIBE` per slot.
    package func ssubscribe(_ channels: [String]) async throws {
        shardsUsed.store(true, ordering: .relaxed)
        try await submit(.ssubscribe, channels)
    }
    package func sunsubscribe(_ channels: [String] = []) async throws { try await submit(.sunsubscribe, channels) }

    /// Whether the connection is up (false while it reconnects).
    package var isConnected: Bool { connected.load(ordering: .relaxed) }

    /// Takes the shard channels Redis dropped on its own since the last call (their slot moved).
    package func takeLostShardChannels() -> [String] {
        lostShards.withLock { lost in
            defer { lost = [] }; return lost
        }
    }

    /// How many times the subscriber reconnected after losing its connection.
    package var reconnectCount: Int { reconnections.load(ordering: .relaxed) }

    /// Unsubscribes from everything (confirmed by Redis, so a PUBLISH right after this returns
    /// counts no receiver here), closes the socket, ends `messages` and joins the thread.
    /// With Redis away the confirmations never come: after `unsubscribeTimeout` it closes anyway.
    package func close(unsubscribeTimeout: Duration = .seconds(2)) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await self.unsubscribe()
                try? await self.punsubscribe()
                if self.shardsUsed.load(ordering: .relaxed) { try? await self.sunsubscribe() }
            }
            group.addTask { try? await Task.sleep(for: unsubscribeTimeout) }
            await group.next()
            // Closing fails whatever still waits, so the unsubscribe task ends too.
            inbox.withLock { $0.closed = true }
            wake()
            group.cancelAll()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [exited] in
                exited.wait()
                exited.signal()
                continuation.resume()
            }
        }
    }

    deinit {
        Glibc.close(wakePipe.read)
        Glibc.close(wakePipe.write)
    }

    private func submit(_ kind: Kind, _ names: [String]) async throws {
        if kind.adds && names.isEmpty { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let closed = inbox.withLock { inbox in
                if inbox.closed { return true }
                inbox.operations.append(Operation(kind: kind, names: names, continuation: continuation))
                return false
            }
            if closed {
                continuation.resume(throwing: RedisError(code: .closed, message: "the subscriber is closed"))
            } else {
                wake()
            }
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    // MARK: - Used by the subscriber's thread

    func takeOperations() -> (operations: [Operation], closed: Bool) {
        inbox.withLock { inbox in
            defer { inbox.operations = [] }
            return (inbox.operations, inbox.closed)
        }
    }

    var wakeDescriptor: Int32 { wakePipe.read }
    var log: Logger { logger }

    func deliver(_ message: RedisPubSubMessage) { output.yield(message) }
    func finishStream() {
        output.finish()
        restored.finish()
    }
    func signalRestored() { restored.yield() }
    func countReconnection() { reconnections.add(1, ordering: .relaxed) }
    func setConnected(_ value: Bool) { connected.store(value, ordering: .relaxed) }
    func shardChannelLost(_ channel: String) { lostShards.withLock { $0.append(channel) } }
}
