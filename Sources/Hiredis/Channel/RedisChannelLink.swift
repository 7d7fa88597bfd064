import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Gauges a ``NIORedisConnection`` reads from any thread while its link updates them on the loop.
final class RedisChannelGauges: Sendable {
    let outstanding = Atomic<Int>(0)
    /// Until when (`NIODeadline` uptime nanoseconds) requests fail fast; 0 when connected.
    let backoffUntil = Atomic<UInt64>(0)
}

/// The channel of a ``NIORedisConnection`` and its reconnect back-off, as ``ReconnectingContext``
/// is for the thread-based connection. Lives on the connection's event loop only.
final class RedisChannelLink {
    private enum State {
        /// No channel: the next request connects, unless the back-off after a failed connect runs.
        case idle
        /// A connect and handshake are under way; requests wait here, in order.
        case connecting(waiting: [(commands: [RedisCommand], completion: RedisReplyCompletion)])
        case ready(RedisChannelHandler)
        case closed
    }

    private let configuration: RedisConfiguration
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let gauges: RedisChannelGauges
    private var state = State.idle
    private var backoff: Duration
    private var nextAttempt = NIODeadline.uptimeNanoseconds(0)
    private var lastError: RedisError?
    /// Called once the channel being connected when `close()` came has closed.
    private var closeWaiters: [() -> Void] = []

    init(configuration: RedisConfiguration, eventLoop: any EventLoop, logger: Logger, gauges: RedisChannelGauges) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.gauges = gauges
        self.backoff = configuration.reconnectBackoff.lowerBound
    }

    private var endpoint: String { "\(configuration.host):\(configuration.port)" }

    func submit(_ commands: [RedisCommand], completion: RedisReplyCompletion) {
        switch state {
        case .ready(let handler):
            handler.send(commands, completion: completion)
        case .connecting(var waiting):
            state = .idle  // so that the array below is not shared: appending does not copy it
            waiting.append((commands, completion))
            state = .connecting(waiting: waiting)
        case .closed:
            completion.resume(with: .failure(RedisError(code: .closed, message: "the Redis connection is closed")))
        case .idle:
            let now = NIODeadline.now()
            if now < nextAttempt, let lastError {
                let wait = Duration.nanoseconds((nextAttempt - now).nanoseconds)
                return completion.resume(
                    with: .failure(
                        RedisError(
                            code: .connectionUnavailable,
                            message: "\(configuration.redactedURL) unavailable, next reconnect in \(wait): \(lastError.message)")))
            }
            state = .connecting(waiting: [(commands, completion)])
            connect()
        }
    }

    /// Fails waiting requests with `.closed`, lets those in flight finish (unless `interrupt`),
    /// and calls `done` once the channel is closed.
    func close(interrupt: Bool, done: @escaping () -> Void) {
        let previous = state
        state = .closed
        switch previous {
        case .idle, .closed:
            done()
        case .connecting(let waiting):
            for request in waiting {
                request.completion.resume(with: .failure(RedisError(code: .closed, message: "the Redis connection was closed")))
            }
            closeWaiters.append(done)
        case .ready(let handler):
            handler.close(interrupt: interrupt)
            handler.closeFuture?.assumeIsolated().whenComplete { _ in done() }
        }
    }

    // MARK: - Connecting

    private func connect() {
        let timeout = TimeAmount.nanoseconds(configuration.connectTimeout.nanoseconds)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.so_keepalive), value: configuration.tcpKeepAlive ? 1 : 0)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: configuration.host, port: configuration.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel): self.connected(channel, timeout: timeout)
                case .failure(let error):
                    self.connectFailed(
                        RedisError(code: .connectionFailed, message: "cannot connect to \(self.endpoint): \(Self.describe(error))"))
                }
            }
    }

    private func connected(_ channel: any Channel, timeout: TimeAmount) {
        if case .closed = state {
            channel.close(promise: nil)
            return finishClose(after: channel.closeFuture)
        }
        let handler = RedisChannelHandler(endpoint: endpoint, timeout: timeout) { [weak self] error in self?.dropped(error) }
        handler.closeFuture = channel.closeFuture
        do {
            try channel.pipeline.syncOperations.addHandler(handler)
        } catch {
            channel.close(promise: nil)
            return connectFailed(RedisError(code: .connectionFailed, message: "cannot set up the channel to \(endpoint): \(error)"))
        }
        let commands = configuration.handshakeCommands
        guard !commands.isEmpty else { return ready(handler) }
        let promise = eventLoop.makePromise(of: [RedisValue].self)
        // The handshake is bounded by the connect timeout; the command timeout applies afterwards.
        handler.send(commands, completion: .promise(promise))
        promise.futureResult.assumeIsolated().whenComplete { result in
            do throws(RedisError) {
                let replies = try result.mapError { $0 as? RedisError ?? RedisError(code: .connectionLost, message: "\($0)") }.get()
                try self.configuration.checkHandshake(commands, replies: replies)
                self.ready(handler)
            } catch {
                handler.drop(error)
                self.connectFailed(error)
            }
        }
    }

    private func ready(_ handler: RedisChannelHandler) {
        guard case .connecting(let waiting) = state else {
            // Closed during the handshake.
            handler.close(interrupt: true)
            if let closeFuture = handler.closeFuture { finishClose(after: closeFuture) }
            return
        }
        if lastError != nil {
            logger.info("redis reconnected", metadata: ["redis.url": "\(configuration.redactedURL)"])
        }
        lastError = nil
        backoff = configuration.reconnectBackoff.lowerBound
        gauges.backoffUntil.store(0, ordering: .relaxed)
        handler.timeout = configuration.commandTimeout.map { .nanoseconds($0.nanoseconds) }
        state = .ready(handler)
        for request in waiting { handler.send(request.commands, completion: request.completion) }
    }

    private func connectFailed(_ error: RedisError) {
        let waiting: [(commands: [RedisCommand], completion: RedisReplyCompletion)]
        if case .connecting(let queued) = state {
            waiting = queued
            state = .idle
        } else {
            waiting = []
            finishClose(after: nil)
        }
        // Bad credentials will not fix themselves by retrying faster; everything else backs off too.
        lastError = error
        nextAttempt = .now() + .nanoseconds((backoff * Double.random(in: 0.5...1.0)).nanoseconds)
        backoff = min(backoff * 2, configuration.reconnectBackoff.upperBound)
        gauges.backoffUntil.store(nextAttempt.uptimeNanoseconds, ordering: .relaxed)
        for request in waiting { request.completion.resume(with: .failure(error)) }
    }

    /// The handler's channel broke: forget it; the next request reconnects at once.
    private func dropped(_ error: RedisError) {
        guard case .ready = state else { return }
        logger.warning("redis connection dropped", metadata: ["redis.url": "\(configuration.redactedURL)", "error": "\(error.message)"])
        state = .idle
        nextAttempt = .now()
    }

    private func finishClose(after closeFuture: EventLoopFuture<Void>?) {
        let waiters = closeWaiters
        closeWaiters = []
        guard let closeFuture else { return waiters.forEach { $0() } }
        closeFuture.assumeIsolated().whenComplete { _ in waiters.forEach { $0() } }
    }

    /// The first underlying reason of a connect failure, in words ("Connection refused").
    private static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return "\(first.error)" }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "\(dns)" }
        }
        if case ChannelError.connectTimeout? = error as? ChannelError { return "connect timed out" }
        return "\(error)"
    }
}
