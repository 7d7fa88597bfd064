import NIOCore
import NIOHTTP2

/// After NIO's HTTP/2 handler, on the connection's frames: opens a stream for each queued request
/// (never more at once than the server's current `SETTINGS_MAX_CONCURRENT_STREAMS`; the rest wait
/// here, in order), routes each stream's frames to its ``HTTP2StreamRequest``, and reads stream 0
/// (SETTINGS, GOAWAY). No stream channel per request: a push provider's load is thousands of
/// small requests on a few connections, and a child channel with its pipeline cost about a
/// quarter of a push's CPU. Lives on the connection's event loop.
///
/// Errors: NIO resets a stream that breaks the protocol (its ``StreamClosedEvent`` ends that
/// request) and answers a connection error with a GOAWAY, which this sees written
/// (``NIOHTTP2FrameDelegate``) and then closes the connection.
final class HTTP2ConnectionHandler: ChannelInboundHandler, NIOHTTP2FrameDelegate {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let state: HTTP2ConnectionState
    /// Succeeds with the server's first SETTINGS frame (its stream limit known), fails if the
    /// connection ends before.
    let ready: EventLoopPromise<Void>
    private var context: ChannelHandlerContext?
    private var queued = CircularBuffer<HTTP2StreamRequest>()
    private var open: [HTTP2StreamID: HTTP2StreamRequest] = [:]
    /// Client streams are odd, in increasing order (RFC 9113 §5.1.1).
    private var nextStreamID = 1
    /// The server's limit; HTTP/2's assumption until its SETTINGS say otherwise.
    private var limit = 100
    private var closedReason: String?
    /// The last error NIO reported, for the stream it closes next.
    private var lastProblem: String?
    /// Inbound body bytes not yet given back to the connection's window.
    private var unacknowledged = 0
    /// Window updates written during this read, flushed when it completes.
    private var windowUpdatesPending = false
    /// The client's liveness probes: how long a PING may wait, and their outcomes.
    private let liveness: HTTP2Liveness
    /// The liveness PING in flight, if any: its timer.
    private var probe: Scheduled<Void>?

    init(state: HTTP2ConnectionState, ready: EventLoopPromise<Void>, liveness: HTTP2Liveness) {
        self.state = state
        self.ready = ready
        self.liveness = liveness
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    // MARK: Requests

    func enqueue(_ requests: [HTTP2StreamRequest]) {
        if let closedReason {
            for request in requests { request.endUnsent(closedReason) }
            return
        }
        queued.append(contentsOf: requests)
        dispatch()
    }

    private func dispatch() {
        guard let context else { return }
        var wrote = false
        while open.count < limit, closedReason == nil, let request = queued.popFirst() {
            guard !request.isFinished else { continue }
            if let halt = request.halt, halt.skips(request.recipient) {
                request.endUnsent("held back: an earlier answer of its batch stopped it")
                continue
            }
            guard nextStreamID <= Int(Int32.max) else {
                // Every stream id is used: this connection takes no more; the client makes another.
                state.closed.store(true, ordering: .relaxed)
                request.endUnsent("no stream id left on this connection")
                close(reason: "no stream id left on this connection")
                break
            }
            let id = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            open[id] = request
            request.opened(id, by: self)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: request.headers)))), promise: nil)
            let written = context.eventLoop.makePromise(of: Void.self)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                promise: written)
            written.futureResult.assumeIsolated().whenSuccess { request.written() }
            request.ended.assumeIsolated().whenComplete { _ in
                // Answered, reset, timed out: its slot is free (the stream may close a moment later).
                if self.open[id] === request { self.open[id] = nil }
                self.dispatch()
            }
            wrote = true
        }
        if wrote { context.flush() }
    }

    /// A request timed out: its stream is cancelled. `quiet`: the server has sent nothing since
    /// the request began, so the connection may be dead rather than slow: a PING finds out.
    func cancel(_ id: HTTP2StreamID, quiet: Bool) {
        guard let context else { return }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        if quiet { probeLiveness(context: context) }
        context.flush()
    }

    /// A server must answer a PING at once (RFC 9113 §6.7): any bytes from it within
    /// the liveness timeout prove the connection alive, and it is kept (a slow provider is not a dead one,
    /// and Apple asks that connections be kept, not churned); none, and it is closed, so the
    /// client opens another. One probe at a time, however many requests time out together.
    private func probeLiveness(context: ChannelHandlerContext) {
        guard probe == nil else { return }
        let sentAt = NIODeadline.now().uptimeNanoseconds
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: sentAt), ack: false))), promise: nil
        )
        probe = context.eventLoop.assumeIsolated().scheduleTask(in: liveness.timeout) {
            self.probe = nil
            let alive = self.state.lastRead.load(ordering: .relaxed) >= sentAt
            self.liveness.decided(alive: alive)
            if !alive { self.context?.close(promise: nil) }
        }
    }

    /// GOAWAY or a closed connection: what has not gone out yet never will on this connection.
    private func close(reason: String) {
        closedReason = closedReason ?? reason
        while let request = queued.popFirst() { request.endUnsent(reason) }
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.streamID == .rootStream else {
            if case .data(let data) = frame.payload { giveBack(data, on: frame.streamID, context: context) }
            open[frame.streamID]?.receive(frame.payload)
            return
        }
        switch frame.payload {
        case .goAway(let lastStreamID, _, _):
            // A later GOAWAY may only lower the last stream id.
            let last = Int(lastStreamID)
            var current = state.goAwayLastStreamID.load(ordering: .relaxed)
            while current < 0 || last < current {
                let (exchanged, original) = state.goAwayLastStreamID.compareExchange(expected: current, desired: last, ordering: .relaxed)
                if exchanged { break }
                current = original
            }
            close(reason: "the server sent GOAWAY")
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                state.noteStreamLimit(setting.value)
                limit = max(0, setting.value)
            }
            ready.succeed()
            dispatch()
        default:
            break
        }
    }

    /// Answers' bodies are read as they come: their bytes go back to the connection's window in
    /// steps of half its initial size, and to the stream's while it is open.
    private func giveBack(_ data: HTTP2Frame.FramePayload.Data, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        let bytes = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        guard bytes > 0 else { return }
        if !data.endStream {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: bytes))), promise: nil)
            windowUpdatesPending = true
        }
        unacknowledged += bytes
        if unacknowledged >= 32_768 {
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledged))),
                promise: nil)
            unacknowledged = 0
            windowUpdatesPending = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The window updates of a read go out in one flush, not one per answer's DATA frame.
        if windowUpdatesPending {
            windowUpdatesPending = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, let request = open.removeValue(forKey: closed.streamID) {
            request.closed(reason: closed.reason, problem: closed.reason == nil ? nil : lastProblem)
            lastProblem = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// NIO wrote a frame: a GOAWAY it wrote itself is its answer to a connection error.
    func wroteFrame(_ frame: HTTP2Frame) {
        guard case .goAway = frame.payload, let context else { return }
        close(reason: "connection error" + (lastProblem.map { ": \($0)" } ?? ""))
        context.eventLoop.assumeIsolated().execute { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream's error comes with its StreamClosedEvent, a connection's with a GOAWAY; TLS and
        // socket errors close the channel themselves. Kept for the message of what ends.
        lastProblem = "\(error)"
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionEnded()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Also when the connection never became active (refused): the promise must end.
        connectionEnded()
        self.context = nil
    }

    private func connectionEnded() {
        probe?.cancel()
        probe = nil
        state.closed.store(true, ordering: .relaxed)
        close(reason: "the connection closed" + (lastProblem.map { ": \($0)" } ?? ""))
        ready.fail(ChannelError.ioOnClosedChannel)
        let streams = open.values
        open = [:]
        for request in streams { request.closed(reason: nil, problem: lastProblem) }
    }
}
