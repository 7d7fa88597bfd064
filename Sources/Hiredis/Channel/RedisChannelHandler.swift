import NIOCore

/// Where a request's replies go: an awaiting task, or (for the handshake) a promise.
enum RedisReplyCompletion {
    case continuation(CheckedContinuation<[RedisValue], any Error>)
    case promise(EventLoopPromise<[RedisValue]>)

    func resume(with result: Result<[RedisValue], RedisError>) {
        switch self {
        case .continuation(let continuation): continuation.resume(with: result.mapError { $0 as any Error })
        case .promise(let promise): promise.completeWith(result.mapError { $0 as any Error })
        }
    }
}

/// The Redis protocol on one channel: requests are encoded into one buffer per event-loop tick
/// and flushed together (automatic pipelining); inbound bytes go through hiredis's reader, and
/// each reply answers the oldest request still waiting (Redis answers in order).
///
/// Lives on its channel's event loop only. After the first failure (a broken socket, a reply
/// later than the timeout, an unreadable reply) it fails everything in flight and every later
/// request with that error, closes the channel and tells its owner through `onDrop` once.
final class RedisChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        let count: Int
        let completion: RedisReplyCompletion
    }

    /// How long a request may wait for its next reply; nil waits forever. The handshake uses the
    /// connect timeout, later requests the command timeout.
    var timeout: TimeAmount?
    /// The channel's close future, for an owner waiting for the socket to be gone.
    var closeFuture: EventLoopFuture<Void>?
    private let endpoint: String
    private let onDrop: (RedisError) -> Void
    private var context: ChannelHandlerContext?
    private let reader = RESPReader()
    private var pending = CircularBuffer<Pending>(initialCapacity: 16)
    /// Replies received so far for the oldest pending request.
    private var replies: [RedisValue] = []
    private var outbound: ByteBuffer = ByteBuffer()
    private var flushScheduled = false
    /// When the connection last made progress (a request sent while idle, or bytes received).
    private var lastProgress = NIODeadline.now()
    private var timer: Scheduled<Void>?
    private var failure: RedisError?
    private var closeWhenIdle = false

    init(endpoint: String, timeout: TimeAmount?, onDrop: @escaping (RedisError) -> Void) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.onDrop = onDrop
    }

    /// Commands queued or awaiting replies on this channel.
    var isIdle: Bool { pending.isEmpty }

    // MARK: - Requests

    /// Queues the commands of one request contiguously; they go out with the others of this tick.
    func send(_ commands: [RedisCommand], completion: RedisReplyCompletion) {
        if let failure { return completion.resume(with: .failure(failure)) }
        guard let context, !closeWhenIdle else {
            return completion.resume(with: .failure(RedisError(code: .closed, message: "the Redis connection is closing")))
        }
        for command in commands { command.encode(into: &outbound) }
        if pending.isEmpty { lastProgress = .now() }
        pending.append(Pending(count: commands.count, completion: completion))
        if !flushScheduled {
            flushScheduled = true
            // Runs after every task already queued on the loop: the requests of this tick share one write.
            context.eventLoop.assumeIsolated().execute { self.flush() }
        }
        armTimer()
    }

    /// Closes the channel once the requests in flight are answered, or at once if `interrupt`.
    func close(interrupt: Bool) {
        closeWhenIdle = true
        if interrupt {
            drop(RedisError(code: .connectionLost, message: "the Redis connection to \(endpoint) was closed with requests in flight"))
        } else if pending.isEmpty {
            context?.close(promise: nil)
        }
    }

    private func flush() {
        flushScheduled = false
        guard let context, failure == nil, outbound.readableBytes > 0 else { return }
        let bytes = outbound
        // A fresh buffer each time: one large pipeline does not pin its memory for the connection's life.
        outbound = context.channel.allocator.buffer(capacity: min(bytes.capacity, 16 * 1024))
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: - Replies

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        outbound = context.channel.allocator.buffer(capacity: 1024)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        drop(RedisError(code: .connectionLost, message: "the connection to \(endpoint) was closed"))
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        do throws(RedisError) {
            try reader.feed(unwrapInboundIn(data))
            while let value = try reader.next() {
                guard let head = pending.first else {
                    throw RedisError(code: .connectionLost, message: "\(endpoint) sent a reply nobody asked for: \(value)")
                }
                replies.append(value)
                if replies.count == head.count {
                    pending.removeFirst()
                    let answer = replies
                    replies = []
                    head.completion.resume(with: .success(answer))
                }
            }
        } catch {
            return drop(error)
        }
        lastProgress = .now()
        if closeWhenIdle && pending.isEmpty { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        drop(RedisError(code: .connectionLost, message: "connection to \(endpoint) lost: closed by the server"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        drop(RedisError(code: .connectionLost, message: "connection to \(endpoint) lost: \(error)"))
    }

    // MARK: - Timeout and failure

    /// One timer per connection rather than one per request: when it fires it checks the time
    /// since the last progress, and sets itself again for the rest if there was some.
    private func armTimer() {
        guard timer == nil, let timeout, let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastProgress + timeout) { self.timerFired() }
    }

    private func timerFired() {
        timer = nil
        guard !pending.isEmpty, failure == nil, let timeout else { return }
        if NIODeadline.now() >= lastProgress + timeout {
            drop(RedisError(code: .timeout, message: "no reply from \(endpoint) within \(timeout.nanoseconds / 1_000_000) ms"))
        } else {
            armTimer()
        }
    }

    /// Fails everything in flight with `error`, closes the channel and tells the owner, once.
    func drop(_ error: RedisError) {
        guard failure == nil else { return }
        failure = error
        timer?.cancel()
        timer = nil
        replies = []
        let failed = pending
        pending.removeAll()
        for request in failed { request.completion.resume(with: .failure(error)) }
        context?.close(promise: nil)
        onDrop(error)
    }
}
