import NIOCore
import NIOHPACK
import NIOHTTP2

/// One request on one HTTP/2 stream: sends HEADERS and DATA (`END_STREAM`) as soon as the stream
/// is active, collects the answer, and completes its promise exactly once with an
/// ``HTTP2Exchange``. A request that gets no answer is `unprocessed` only when HTTP/2 says so
/// (`REFUSED_STREAM`, a GOAWAY below its stream id, the request never fully written); otherwise it
/// is `failed`, because APNs may have acted on it. Its timeout is kept by its batch's
/// ``HTTP2BatchDeadline`` (a timer per stream costs a heap entry each, and cancelling one is a
/// linear search), which calls ``expire()``.
final class HTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    static let maxAnswerBytes = 16 * 1024

    private let headers: HPACKHeaders
    private let body: ByteBuffer
    private let connection: HTTP2ConnectionState
    private let completion: HTTP2ExchangeCompletion
    /// The batch's halt, if it has one: answers are shown to it, and no stream opens once it trips.
    let halt: HTTP2Halt?
    /// The request's recipient (``HTTP2Request/recipient``).
    let recipient: String?
    private var started = false
    private var finished = false
    /// When the whole request left for the socket: its timeout runs from here, not from when it
    /// was queued for a stream.
    private(set) var writtenAt: NIODeadline?
    var isFinished: Bool { finished }
    /// Completes when this request has ended, however.
    var ended: EventLoopFuture<HTTP2Exchange> { completion.promise.futureResult }
    private var refused = false
    private var status: Int?
    private var responseID: String?
    private var retryAfter: String?
    private var answer: [UInt8] = []
    private var problem: String?
    private var context: ChannelHandlerContext?
    private var startedAt: UInt64 = 0

    init(headers: HPACKHeaders, body: ByteBuffer, connection: HTTP2ConnectionState, completion: HTTP2ExchangeCompletion, halt: HTTP2Halt? = nil, recipient: String? = nil) {
        self.halt = halt
        self.recipient = recipient
        self.headers = headers
        self.body = body
        self.connection = connection
        self.completion = completion
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        startedAt = NIODeadline.now().uptimeNanoseconds
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: written)
        written.futureResult.assumeIsolated().whenSuccess {
            self.writtenAt = .now()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
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

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, closed.reason == .refusedStream { refused = true }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if problem == nil { problem = "\(error)" }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finishUnanswered(context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finishUnanswered(context: context)
    }

    private func finishAnswered() {
        guard !finished, let status else { return }
        halt?.consider(status: status, retryAfter: retryAfter, body: answer, recipient: recipient)
        complete(.answered(status: status, responseID: responseID, retryAfter: retryAfter, body: answer))
    }

    private func finishUnanswered(context: ChannelHandlerContext) {
        guard !finished else { return }
        if let status {
            // Headers came, the body did not finish: an answer all the same.
            halt?.consider(status: status, retryAfter: retryAfter, body: answer, recipient: recipient)
            complete(.answered(status: status, responseID: responseID, retryAfter: retryAfter, body: answer))
            return
        }
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { Int($0) }
        if refused {
            complete(.unprocessed(reason: "APNs refused the stream (REFUSED_STREAM)"))
        } else if let streamID, connection.wasRefusedByGoAway(streamID) {
            complete(.unprocessed(reason: "APNs sent GOAWAY below stream \(streamID)"))
        } else if writtenAt == nil {
            complete(.unprocessed(reason: "the connection closed before the request was written" + (problem.map { ": \($0)" } ?? "")))
        } else {
            complete(.failed(reason: "the connection closed before APNs answered" + (problem.map { ": \($0)" } ?? "")))
        }
    }

    /// Never sent: no stream was opened for it, or its connection went away first. Safe to send
    /// again elsewhere.
    func endUnsent(_ reason: String) {
        guard !finished else { return }
        complete(.unprocessed(reason: reason))
    }

    /// The batch's time is up: if this request has no answer yet, it has timed out.
    func expire() {
        guard !finished else { return }
        guard let context else {
            // Still waiting for a stream: nothing was sent, and nothing will be.
            complete(.timedOut)
            return
        }
        complete(.timedOut)
        // Nothing at all from the server since this request began: the connection is dead, not slow.
        if connection.lastRead.load(ordering: .relaxed) < startedAt { context.channel.parent?.close(promise: nil) }
        context.close(promise: nil)
    }

    private func complete(_ exchange: HTTP2Exchange) {
        finished = true
        context = nil
        completion.complete(exchange)
    }
}
