import NIOCore
import NIOHTTP2

/// Opens a stream for each queued request, never more at once than the server's current
/// `SETTINGS_MAX_CONCURRENT_STREAMS`; the rest wait here, in order. (SwiftNIO's HTTP/2 handler
/// would also hold streams beyond the limit, but it walks all it holds on every flush, which is
/// quadratic for the thousands a fan-out queues.) Lives on the connection's event loop.
final class HTTP2StreamScheduler {
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let eventLoop: any EventLoop
    private var queued = CircularBuffer<HTTP2StreamHandler>()
    private var inFlight = 0
    /// The server's limit; HTTP/2's assumption until its SETTINGS say otherwise.
    private var limit = 100
    private var closedReason: String?

    init(multiplexer: NIOHTTP2Handler.StreamMultiplexer, eventLoop: any EventLoop) {
        self.multiplexer = multiplexer
        self.eventLoop = eventLoop
    }

    func enqueue(_ handlers: [HTTP2StreamHandler]) {
        if let closedReason {
            for handler in handlers { handler.endUnsent("\(closedReason)") }
            return
        }
        queued.append(contentsOf: handlers)
        dispatch()
    }

    /// The server changed its stream limit (raised after a valid token, lowered after a refusal).
    func limitChanged(to value: Int) {
        limit = max(0, value)
        dispatch()
    }

    /// GOAWAY or a closed connection: what has not gone out yet never will on this connection.
    func close(reason: String) {
        closedReason = closedReason ?? reason
        while let handler = queued.popFirst() { handler.endUnsent(reason) }
    }

    private func dispatch() {
        while inFlight < limit, closedReason == nil, let handler = queued.popFirst() {
            guard !handler.isFinished else { continue }
            if let halt = handler.halt, halt.skips(handler.recipient) {
                handler.endUnsent("held back: an earlier answer of its batch stopped it")
                continue
            }
            inFlight += 1
            handler.ended.assumeIsolated().whenComplete { _ in
                self.inFlight -= 1
                self.dispatch()
            }
            let bound = NIOLoopBound(handler, eventLoop: eventLoop)
            let opened = eventLoop.makePromise(of: (any Channel).self)
            multiplexer.createStreamChannel(promise: opened) { stream in
                stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(bound.value) }
            }
            opened.futureResult.assumeIsolated().whenFailure { error in bound.value.endUnsent("no stream: \(error)") }
        }
    }
}
