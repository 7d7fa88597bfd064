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
