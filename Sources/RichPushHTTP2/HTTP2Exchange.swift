import NIOCore
import Synchronization

/// How one request ended, as the HTTP/2 client saw it.
package enum HTTP2Exchange: Sendable, Hashable {
    /// The server answered: its status, the configured id header (`apns-id`), `retry-after` and
    /// body (at most 16 KiB).
    case answered(status: Int, responseID: String?, retryAfter: String?, body: [UInt8])
    /// The server certainly did not process the request: refused before it opened the stream
    /// (`REFUSED_STREAM`), above the `GOAWAY`'s last stream id, or never fully written.
    /// Safe to send again, on another connection.
    case unprocessed(reason: String)
    /// No answer and no way to know whether the server acted on it (the connection died
    /// mid-request): retry later, with the same id (`apns-id`) where the protocol has one.
    case failed(reason: String)
    /// No answer within the request timeout; the stream was cancelled.
    case timedOut

    /// The reason of an exchange the server refused before it opened the stream (`REFUSED_STREAM`).
    static let refusedStreamReason = "the server refused the stream (REFUSED_STREAM)"

    /// Whether the server refused the stream (more streams than it allows, or a stream it would not open).
    var wasRefusedStream: Bool { self == .unprocessed(reason: Self.refusedStreamReason) }
}

/// Completes an exchange's promise once, whoever comes first: the stream's handler, or the
/// connection when the stream could not be opened at all.
final class HTTP2ExchangeCompletion: Sendable {
    let promise: EventLoopPromise<HTTP2Exchange>
    private let done = Atomic<Bool>(false)

    init(promise: EventLoopPromise<HTTP2Exchange>) { self.promise = promise }

    func complete(_ exchange: HTTP2Exchange) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.succeed(exchange) }
    }
}
