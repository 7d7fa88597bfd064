import Dispatch
import Foundation
package import Logging
import Synchronization

/// A connection to Redis with a thread of its own, shared by any number of tasks.
///
/// Requests from concurrent tasks queue up while the thread is busy and go out together as one
/// pipeline: one `write` and as few `read`s as the replies need (automatic pipelining, as
/// valkey-swift and StackExchange.Redis do). The commands of one request stay contiguous, so a
/// MULTI…EXEC request cannot interleave with another's. Blocking hiredis calls happen on the
/// connection's own thread only, never on the cooperative pool or an event loop.
///
/// The connection is also a `TaskExecutor`: a loop that talks mostly to this connection can run
/// inside `withTaskExecutorPreference(connection) { … }`, and then its code runs on the
/// connection's thread between requests, so a request and its reply cost no thread hand-off at
/// all (`richpush bench redis --on-connection-thread`). Keep such code short: it delays the connection.
///
/// When the socket breaks, the requests in flight fail with ``RedisError/Code/connectionLost``
/// (they may or may not have run) and the next request reconnects. While reconnects fail, requests
/// fail fast with ``RedisError/Code/connectionUnavailable`` until the back-off has passed.
/// A connection that will run blocking commands (`XREADGROUP … BLOCK`) should be used for
/// nothing else, and its ``RedisConfiguration/commandTimeout`` must exceed the block time.
package final class RedisConnection: RedisClient, TaskExecutor, Sendable {
    package let configuration: RedisConfiguration
    private let logger: Logger
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let socket = Atomic<Int32>(-1)
    private let exited = DispatchSemaphore(value: 0)
    private let outstanding = Atomic<Int>(0)
    /// Until when (`DispatchTime` uptime nanoseconds) requests fail fast: the last connect failed
    /// and the reconnect back-off runs. 0 when connected.
    private let backoffUntil = Atomic<UInt64>(0)
    /// The `pthread_t` of the connection's thread, for tests that check where code ran.
    let threadID = Atomic<UInt>(0)

    private struct Request {
        let commands: [RedisCommand]
        let continuation: CheckedContinuation<[RedisValue], any Error>
    }

    private struct State {
        var requests: [Request] = []
        var jobs: [UnownedJob] = []
        var sleeping = false
        var closed = false
        var exited = false

        /// Marks the thread awake; true when the caller must signal it.
        mutating func wake() -> Bool {
            defer { sleeping = false }
            return sleeping
        }
    }

    /// Starts the connection's thread; the TCP connection is made by the first request.
    package init(configuration: RedisConfiguration, logger: Logger = Logger(label: "richpush.redis")) {
        self.configuration = configuration
        self.logger = logger
        let name = ThreadName.forConnection(clientName: configuration.clientName)
        Thread { [self] in
            ThreadName.setCurrent(name)  // from inside: Foundation on Linux ignores a name set before start()
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            run()
        }.start()
    }

    /// Connects now, so that a bad URL, password or host fails here rather than on first use.
    package static func connect(
        configuration: RedisConfiguration, logger: Logger = Logger(label: "richpush.redis")
    ) async throws -> RedisConnection {
        try await RedisConnection(configuration: configuration, logger: logger).pinged()
    }

    /// Commands queued or in flight; the pool sends each request to the connection with the fewest.
    package var outstandingCommandCount: Int { outstanding.load(ordering: .relaxed) }
    /// Whether the last attempt to connect failed: requests fail fast until the back-off ends.
    /// A pool sends elsewhere meanwhile.
    package var isBackingOff: Bool { DispatchTime.now().uptimeNanoseconds < backoffUntil.load(ordering: .relaxed) }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        return try await withCheckedThrowingContinuation { continuation in
            let outcome: (wake: Bool, closed: Bool) = state.withLock { state in
                if state.closed { return (false, true) }
                state.requests.append(Request(commands: commands, continuation: continuation))
                outstanding.add(commands.count, ordering: .relaxed)
                return (state.wake(), false)
            }
            if outcome.closed {
                continuation.resume(throwing: RedisError(code: .closed, message: "the Redis connection is closed"))
            } else if outcome.wake {
                wakeup.signal()
            }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let outcome: (wake: Bool, exited: Bool) = state.withLock { state in
            if state.exited { return (false, true) }
            state.jobs.append(job)
            return (state.wake(), false)
        }
        if outcome.exited {
            // The thread is gone: run the job on the global executor rather than lose it.
            job.runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor())
        } else if outcome.wake {
            wakeup.signal()
        }
    }

    /// Fails queued requests, lets the request in flight finish (or interrupts a blocked read when
    /// `interrupt` is true), closes the socket and joins the thread.
    package func close(interrupt: Bool = false) async {
        let wake = state.withLock { state in
            state.closed = true
            return state.wake()
        }
        if wake { wakeup.signal() }
        if interrupt {
            let fd = socket.load(ordering: .acquiring)
            if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [exited] in
                exited.wait()
                exited.signal()
                continuation.resume()
            }
        }
    }

    // MARK: - The connection's thread

    private func run() {
        var link = ReconnectingContext(configuration: configuration)
        while let (jobs, requests) = nextWork() {
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if !requests.isEmpty { execute(requests, on: &link) }
        }
        socket.store(-1, ordering: .releasing)
        link.context = nil
        // Jobs that arrived after the last round still run; later ones go to the global executor.
        let late = state.withLock { state in
            state.exited = true
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in late { job.runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor()) }
        exited.signal()
    }

    /// Waits for jobs or requests and takes them all (requests up to a bound); nil once closed.
    private func nextWork() -> (jobs: [UnownedJob], requests: [Request])? {
        // Optionally spin before sleeping: a caller that sends its next request right after its
        // reply then finds this thread awake, saving a futex wake-up (tens of µs on a VM).
        var spinning = configuration.idleSpin > .zero
        let spinUntil = spinning ? ContinuousClock.now + configuration.idleSpin : ContinuousClock.now
        while true {
            let work: (jobs: [UnownedJob], requests: [Request])? = state.withLock { state in
                if state.closed && state.jobs.isEmpty {
                    for request in state.requests {
                        finish(request, with: .failure(RedisError(code: .closed, message: "the Redis connection was closed")))
                    }
                    state.requests = []
                    return nil
                }
                if state.requests.isEmpty && state.jobs.isEmpty {
                    if !spinning { state.sleeping = true }
                    return ([], [])
                }
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return (jobs, takeRequests(from: &state.requests))
            }
            guard let work else { return nil }
            if !work.jobs.isEmpty || !work.requests.isEmpty { return work }
            if spinning {
                spinning = ContinuousClock.now < spinUntil
                continue
            }
            wakeup.wait()
        }
    }

    private func takeRequests(from queue: inout [Request]) -> [Request] {
        var taken = 0
        var commands = 0
        while taken < queue.count && (taken == 0 || commands + queue[taken].commands.count <= Self.maxBatchCommands) {
            commands += queue[taken].commands.count
            taken += 1
        }
        if taken == queue.count {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        defer { queue.removeFirst(taken) }
        return Array(queue.prefix(taken))
    }

    /// Bounds the memory of one pipelined write; a single larger request still goes out whole.
    private static let maxBatchCommands = 4096

    private func execute(_ batch: [Request], on link: inout ReconnectingContext) {
        let context: RedisContext
        do throws(RedisError) {
            context = try link.connected(logger: logger)
            socket.store(context.fileDescriptor, ordering: .releasing)
            backoffUntil.store(0, ordering: .relaxed)
        } catch {
            let wait = UInt64(max(0, link.backoffRemaining.nanoseconds))
            backoffUntil.store(DispatchTime.now().uptimeNanoseconds + wait, ordering: .relaxed)
            for request in batch { finish(request, with: .failure(error)) }
            return
        }
        var answered = 0
        do throws(RedisError) {
            for request in batch { try context.append(request.commands) }
            for request in batch {
                var replies: [RedisValue] = []
                replies.reserveCapacity(request.commands.count)
                for _ in request.commands { replies.append(try context.readReply()) }
                answered += 1
                finish(request, with: .success(replies))
            }
        } catch {
            logger.warning(
                "redis connection dropped", metadata: ["redis.url": "\(configuration.redactedURL)", "error": "\(error.message)"])
            socket.store(-1, ordering: .releasing)
            link.dropped()
            for request in batch[answered...] { finish(request, with: .failure(error)) }
        }
    }

    private func finish(_ request: Request, with result: Result<[RedisValue], RedisError>) {
        outstanding.subtract(request.commands.count, ordering: .relaxed)
        request.continuation.resume(with: result.mapError { $0 as any Error })
    }
}
