import NIOCore

/// The timeouts of one batch of requests on one connection, with one timer: a request times out
/// `timeout` after it was written, so time spent waiting for a stream (the server's limit, or
/// the requests ahead of it) does not count against it, and one that never gets a stream gives
/// up after twice `timeout` (nothing was sent). Lives on the connection's event loop.
final class HTTP2BatchDeadline {
    private var waiting: [HTTP2StreamRequest]
    private let timeout: TimeAmount
    private let queuedAt: NIODeadline
    private let eventLoop: any EventLoop
    private var timer: Scheduled<Void>?

    init(handlers: [HTTP2StreamRequest], timeout: TimeAmount, eventLoop: any EventLoop) {
        waiting = handlers
        self.timeout = timeout
        self.eventLoop = eventLoop
        queuedAt = .now()
        arm(at: queuedAt + timeout)
    }

    private func arm(at deadline: NIODeadline) {
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.check() }
    }

    private func check() {
        let now = NIODeadline.now()
        var next = NIODeadline.distantFuture
        var expired: [HTTP2StreamRequest] = []
        // Expiring completes answers, which may cancel this deadline: decide first, expire after.
        waiting.removeAll { handler in
            if handler.isFinished { return true }
            let due = handler.writtenAt.map { $0 + timeout } ?? queuedAt + timeout + timeout
            if due <= now {
                expired.append(handler)
                return true
            }
            next = min(next, due)
            return false
        }
        let more = !waiting.isEmpty
        for handler in expired { handler.expire() }
        if more, timer != nil { arm(at: next) }
    }

    /// Every answer is in.
    func cancel() {
        timer?.cancel()
        timer = nil
        waiting = []
    }
}
