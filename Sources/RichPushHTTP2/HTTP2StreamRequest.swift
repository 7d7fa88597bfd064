import NIOCore
import NIOHPACK
import NIOHTTP2

/// One request on one HTTP/2 stream of a connection's frames (``HTTP2ConnectionHandler`` opens
/// the stream and routes its frames here): it collects the answer and completes its promise
/// exactly once with an ``HTTP2Exchange``. A request that gets no answer is `unprocessed` only
/// when HTTP/2 says so (`REFUSED_STREAM`, a GOAWAY below its stream id, the request never fully
/// written); otherwise it is `failed`, because the server may have acted on it. Its timeout is
/// kept by its batch's ``HTTP2BatchDeadline``, which calls ``expire()``. Lives on the
/// connection's event loop.
final class HTTP2StreamRequest {
    static let maxAnswerBytes = 16 * 1024

    let headers: HPACKHeaders
    let body: ByteBuffer
    private let connection: HTTP2ConnectionState
    private let completion: HTTP2ExchangeCompletion
    /// The batch's halt, if it has one: answers are shown to it, and no stream opens once it trips.
    let halt: HTTP2Halt?
    /// The request's recipient (``HTTP2Request/recipient``).
    let recipient: String?
    private var finished = false
    /// The stream, once opened, and who opened it (to cancel it).
    private(set) var streamID: HTTP2StreamID?
    private weak var owner: HTTP2ConnectionHandler?
    /// When the whole request left for the socket: its timeout runs from here, not from when it
    /// was queued for a stream.
    private(set) var writtenAt: NIODeadline?
    var isFinished: Bool { finished }
    /// Completes when this request has ended, however.
    var ended: EventLoopFuture<HTTP2Exchange> { completion.promise.futureResult }
    private var status: Int?
    private var responseID: String?
    private var retryAfter: String?
    private var answer: [UInt8] = []
    private var startedAt: UInt64 = 0

    init(
        headers: HPACKHeaders, body: ByteBuffer, connection: HTTP2ConnectionState, completion: HTTP2ExchangeCompletion,
        halt: HTTP2Halt? = nil, recipient: String? = nil
    ) {
        self.halt = halt
        self.recipient = recipient
        self.headers = headers
        self.body = body
        self.connection = connection
        self.completion = completion
    }

    /// Its stream is `id` on `owner`'s connection; its frames are being written.
    func opened(_ id: HTTP2StreamID, by owner: HTTP2ConnectionHandler) {
        streamID = id
        self.owner = owner
        startedAt = NIODeadline.now().uptimeNanoseconds
    }

    /// The request's last frame reached the socket.
    func written() {
        writtenAt = .now()
    }

    func receive(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .headers(let frame):
            if status == nil, let code = frame.headers.first(name: ":status").flatMap(Int.init), code >= 200 {
                status = code
                responseID = connection.responseIDHeader.flatMap { frame.headers.first(name: $0) }
                retryAfter = frame.headers.first(name: "retry-after")
            }
            if frame.endStream { finishAnswered() }
        case .data(let frame):
            if case .byteBuffer(let bytes) = frame.data {
                let room = Self.maxAnswerBytes - answer.count
                if room > 0 { answer += bytes.readableBytesView.prefix(room) }
            }
            if frame.endStream { finishAnswered() }
        default:
            break
        }
    }

    /// The stream closed: reset by the server (`reason`), by HTTP/2's checks (`problem`), or
    /// because the connection ended.
    func closed(reason: HTTP2ErrorCode?, problem: String?) {
        guard !finished else { return }
        if let status {
            // Headers came, the body did not finish: an answer all the same.
            halt?.consider(status: status, retryAfter: retryAfter, body: answer, recipient: recipient)
            complete(.answered(status: status, responseID: responseID, retryAfter: retryAfter, body: answer))
            return
        }
        let detail = problem.map { ": \($0)" } ?? ""
        if reason == .refusedStream {
            complete(.unprocessed(reason: HTTP2Exchange.refusedStreamReason))
        } else if let streamID, connection.wasRefusedByGoAway(Int(streamID)) {
            complete(.unprocessed(reason: "the server sent GOAWAY below stream \(Int(streamID))"))
        } else if writtenAt == nil {
            complete(.unprocessed(reason: "the connection closed before the request was written" + detail))
        } else if let reason {
            complete(.failed(reason: "the server reset the stream (\(reason))" + detail))
        } else {
            complete(.failed(reason: "the connection closed before the server answered" + detail))
        }
    }

    private func finishAnswered() {
        guard !finished, let status else { return }
        halt?.consider(status: status, retryAfter: retryAfter, body: answer, recipient: recipient)
        complete(.answered(status: status, responseID: responseID, retryAfter: retryAfter, body: answer))
    }

    /// Never sent: no stream was opened for it, or its connection went away first. Safe to send
    /// again elsewhere.
    func endUnsent(_ reason: String) {
        guard !finished else { return }
        complete(.unprocessed(reason: reason))
    }

    /// The batch's time is up: if this request has no answer yet, it has timed out and its stream
    /// is cancelled.
    func expire() {
        guard !finished else { return }
        complete(.timedOut)
        guard let streamID, let owner else { return }  // still waiting for a stream: nothing was sent
        // Nothing at all from the server since this request began: dead or slow, a PING tells.
        owner.cancel(streamID, quiet: connection.lastRead.load(ordering: .relaxed) < startedAt)
    }

    private func complete(_ exchange: HTTP2Exchange) {
        finished = true
        completion.complete(exchange)
    }
}
