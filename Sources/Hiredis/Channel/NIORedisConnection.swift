package import Logging
package import NIOCore
import NIOPosix

/// A connection to Redis on a SwiftNIO channel, shared by any number of tasks: the same contract
/// as ``RedisConnection`` without a thread of its own.
///
/// The event loop owns the socket; hiredis's `redisReader` parses the replies as bytes arrive,
/// so a reply completes its request on the loop with no blocking call and no thread waiting for
/// it. Requests that reach the loop in one tick go out in one write (automatic pipelining); the
/// commands of one request stay contiguous.
///
/// When the socket breaks, the requests in flight fail with ``RedisError/Code/connectionLost``,
/// or ``RedisError/Code/timeout`` when no reply came within ``RedisConfiguration/commandTimeout``
/// (the connection is then dropped), and the next request reconnects. While reconnects fail,
/// requests fail fast with ``RedisError/Code/connectionUnavailable`` until the back-off has passed.
///
/// The connection is also a `TaskExecutor` running on its event loop: code inside
/// `withTaskExecutorPreference(connection) { … }` sends and gets its replies on the loop.
package final class NIORedisConnection: RedisClient, TaskExecutor, Sendable {
    package let configuration: RedisConfiguration
    package let eventLoop: any EventLoop
    private let link: NIOLoopBoundBox<RedisChannelLink>
    private let gauges = RedisChannelGauges()

    /// Makes the connection on `eventLoop`; the TCP connection is made by the first request.
    package init(
        configuration: RedisConfiguration,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
        logger: Logger = Logger(label: "richpush.redis")
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        link = .makeBoxSendingValue(
            RedisChannelLink(configuration: configuration, eventLoop: eventLoop, logger: logger, gauges: gauges),
            eventLoop: eventLoop)
    }

    /// Connects now, so that a bad URL, password or host fails here rather than on first use.
    package static func connect(
        configuration: RedisConfiguration,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
        logger: Logger = Logger(label: "richpush.redis")
    ) async throws -> NIORedisConnection {
        try await NIORedisConnection(configuration: configuration, eventLoop: eventLoop, logger: logger).pinged()
    }

    /// Commands queued or in flight; the pool sends each request to the connection with the fewest.
    package var outstandingCommandCount: Int { gauges.outstanding.load(ordering: .relaxed) }
    /// Whether the last attempt to connect failed: requests fail fast until the back-off ends.
    package var isBackingOff: Bool { NIODeadline.now().uptimeNanoseconds < gauges.backoffUntil.load(ordering: .relaxed) }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        gauges.outstanding.add(commands.count, ordering: .relaxed)
        defer { gauges.outstanding.subtract(commands.count, ordering: .relaxed) }
        return try await withCheckedThrowingContinuation { continuation in
            if eventLoop.inEventLoop {
                link.value.submit(commands, completion: .continuation(continuation))
            } else {
                eventLoop.execute { [link] in link.value.submit(commands, completion: .continuation(continuation)) }
            }
        }
    }

    /// Fails queued requests with ``RedisError/Code/closed``, lets those in flight finish (or
    /// fails them at once when `interrupt` is true) and returns once the socket is closed.
    package func close(interrupt: Bool = false) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            eventLoop.execute { [link] in link.value.close(interrupt: interrupt) { continuation.resume() } }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
