import NIOCore
import Synchronization

/// How one request to APNs ended, as the HTTP/2 client saw it.
public enum APNSExchange: Sendable, Hashable {
    /// APNs answered: its status, `apns-id`, `retry-after` and body (at most 16 KiB).
    case answered(status: Int, apnsID: String?, retryAfter: String?, body: [UInt8])
    /// APNs certainly did not process the request: refused before it opened the stream
    /// (`REFUSED_STREAM`), above the `GOAWAY`'s last stream id, or never fully written.
    /// Safe to send again, on another connection.
    case unprocessed(reason: String)
    /// No answer and no way to know whether APNs acted on it (the connection died mid-request):
    /// retry later; the same `apns-id` goes with it.
    case failed(reason: String)
    /// No answer within the request timeout; the stream was cancelled.
    case timedOut
}

/// Completes an exchange's promise once, whoever comes first: the stream's handler, or the
/// multiplexer when the stream could not be opened at all.
final class APNSExchangeCompletion: Sendable {
    let promise: EventLoopPromise<APNSExchange>
    private let done = Atomic<Bool>(false)

    init(promise: EventLoopPromise<APNSExchange>) { self.promise = promise }

    func complete(_ exchange: APNSExchange) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.succeed(exchange) }
    }
}
