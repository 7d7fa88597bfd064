import NIOCore
import NIOHTTP2
import Synchronization

/// What one connection has heard from the server outside its streams: a GOAWAY and its last stream
/// id, the stream limit as it changes, when the server last sent anything, and whether the
/// connection is closed. Written on the connection's event loop, read from anywhere.
final class HTTP2ConnectionState: Sendable {
    /// The last stream id of a GOAWAY, or -1 before any.
    let goAwayLastStreamID = Atomic<Int>(-1)
    let closed = Atomic<Bool>(false)
    /// `NIODeadline.now().uptimeNanoseconds` when the server last sent bytes.
    let lastRead = Atomic<UInt64>(0)
    /// Whether the `firstTimeOnly` headers have gone out once with incremental indexing.
    let namesIndexed = Atomic<Bool>(false)
    /// The answer header whose value an ``HTTP2Exchange`` reports as `responseID` (`apns-id`).
    let responseIDHeader: String?
    private let limits = Mutex<[Int]>([])

    init(responseIDHeader: String?) {
        self.responseIDHeader = responseIDHeader
    }

    /// For new requests: open and not going away.
    var isUsable: Bool {
        !closed.load(ordering: .relaxed) && goAwayLastStreamID.load(ordering: .relaxed) < 0
    }

    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` values in the order they came (the last 32).
    var streamLimits: [Int] { limits.withLock { $0 } }

    func noteStreamLimit(_ value: Int) {
        limits.withLock {
            $0.append(value)
            if $0.count > 32 { $0.removeFirst() }
        }
    }

    /// Whether a stream that got no answer was certainly not processed: above a GOAWAY's last
    /// stream id.
    func wasRefusedByGoAway(_ streamID: Int) -> Bool {
        let last = goAwayLastStreamID.load(ordering: .relaxed)
        return last >= 0 && streamID > last
    }
}

/// Between TLS and HTTP/2: notes when the server last sent anything, so a request that times
/// out can tell a slow answer from a dead connection.
final class HTTP2ReadClockHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let state: HTTP2ConnectionState

    init(state: HTTP2ConnectionState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        state.lastRead.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
        context.fireChannelRead(data)
    }
}

/// Between TLS and HTTP/2: every stream flushes the connection when it starts, and each flush
/// costs a TLS record and a system call. Flushes asked for in one turn of the event loop become
/// one, at the end of that turn: a batch of a thousand requests goes out in a few writes.
final class HTTP2FlushCoalescingHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    private var flushPending = false

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        context.eventLoop.assumeIsolated().execute {
            self.flushPending = false
            context.flush()
        }
    }
}

/// After the HTTP/2 handler: the frames of stream 0 (SETTINGS, GOAWAY) and the connection's end.
final class HTTP2RootStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    let state: HTTP2ConnectionState
    let scheduler: HTTP2StreamScheduler
    /// Succeeds with the server's first SETTINGS frame (its stream limit known), fails if the
    /// connection ends before.
    let ready: EventLoopPromise<Void>

    init(state: HTTP2ConnectionState, scheduler: HTTP2StreamScheduler, ready: EventLoopPromise<Void>) {
        self.state = state
        self.scheduler = scheduler
        self.ready = ready
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .goAway(let lastStreamID, _, _):
            // A later GOAWAY may only lower the last stream id.
            let last = Int(lastStreamID)
            var current = state.goAwayLastStreamID.load(ordering: .relaxed)
            while current < 0 || last < current {
                let (exchanged, original) = state.goAwayLastStreamID.compareExchange(expected: current, desired: last, ordering: .relaxed)
                if exchanged { break }
                current = original
            }
            scheduler.close(reason: "APNs sent GOAWAY")
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                state.noteStreamLimit(setting.value)
                scheduler.limitChanged(to: setting.value)
            }
            ready.succeed()
        default:
            break
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Also when the connection never became active (refused): the promise must end.
        state.closed.store(true, ordering: .relaxed)
        scheduler.close(reason: "the connection closed")
        ready.fail(ChannelError.ioOnClosedChannel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.closed.store(true, ordering: .relaxed)
        scheduler.close(reason: "the connection closed")
        ready.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A connection error (TLS, protocol): this connection is done; requests on it end.
        state.closed.store(true, ordering: .relaxed)
        scheduler.close(reason: "connection error: \(error)")
        ready.fail(error)
        context.close(promise: nil)
    }
}
