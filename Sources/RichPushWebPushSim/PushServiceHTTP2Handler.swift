import NIOCore
import NIOHPACK
import NIOHTTP2

/// The service over HTTP/2, on the connection's frames: each request is gathered from its
/// HEADERS and DATA frames and answered by ``WebPushSimulator/respond(_:)`` on the event loop,
/// with no stream channel, request task or router per request. A push service answers many
/// small requests on few connections: per stream, Hummingbird's HTTP/2 server (a child channel,
/// its pipeline, an async task) cost the simulator about half its CPU, and the benchmark runs
/// the simulator on the same two cores as the adapter it measures.
///
/// Flow control: the connection's window is given back as bodies are read. A body is kept up to
/// ``PushRequestRules/maxBodyBytes``; past it the rest is read and dropped (its stream's window
/// given back too, so the sender can finish) and the request answered 413 when it ends.
final class PushServiceHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Pending {
        var headers: HPACKHeaders
        var body: [UInt8] = []
        var tooLarge = false
    }

    private let simulator: WebPushSimulator
    private var pending: [HTTP2StreamID: Pending] = [:]
    /// Answers waiting out an injected delay.
    private var delayed = 0
    private var unacknowledged = 0
    private var lastStreamID = HTTP2StreamID(0)
    private var quiescing = false
    private var flushPending = false

    init(simulator: WebPushSimulator) {
        self.simulator = simulator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if id > lastStreamID { lastStreamID = id }
            if pending[id] == nil { pending[id] = Pending(headers: headers.headers) }
            if headers.endStream { finish(id, context: context) }
        case .data(let data):
            giveBack(data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0), context: context)
            if case .byteBuffer(let buffer) = data.data, var request = pending[id] {
                if request.tooLarge || request.body.count + buffer.readableBytes > PushRequestRules.maxBodyBytes {
                    request.tooLarge = true
                    request.body = []
                    if !data.endStream, buffer.readableBytes > 0 {
                        context.write(
                            wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: buffer.readableBytes))),
                            promise: nil)
                        flushPending = true
                    }
                } else {
                    request.body.append(contentsOf: buffer.readableBytesView)
                }
                pending[id] = request
            }
            if data.endStream { finish(id, context: context) }
        case .rstStream:
            pending[id] = nil
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if flushPending {
            flushPending = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            // Reset by the peer or by NIO's checks (a malformed request): nothing to answer.
            pending[closed.streamID] = nil
            closeIfIdle(context: context)
        } else if event is ChannelShouldQuiesceEvent {
            // Graceful close: no new streams past the last one seen; close once all are answered.
            quiescing = true
            context.writeAndFlush(
                wrapOutboundOut(
                    HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))),
                promise: nil)
            closeIfIdle(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The connection's flow-control window, given back in steps of half the initial window.
    private func giveBack(_ bytes: Int, context: ChannelHandlerContext) {
        unacknowledged += bytes
        guard unacknowledged >= 32_768 else { return }
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledged))), promise: nil)
        unacknowledged = 0
        flushPending = true
    }

    private func finish(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = pending.removeValue(forKey: id) else { return }
        let headers = request.headers
        let answer = simulator.respond(
            WebPushSimulator.Request(
                method: headers.first(name: ":method") ?? "",
                path: headers.first(name: ":path").map { String($0.prefix { $0 != "?" }) } ?? "",
                header: { name in
                    let values = headers[name]
                    return values.isEmpty ? nil : values.joined(separator: ", ")
                },
                body: request.body, tooLarge: request.tooLarge))
        guard answer.delay > .zero else {
            write(answer, on: id, context: context)
            flushPending = true
            return
        }
        delayed += 1
        let loop = context.eventLoop.assumeIsolated()
        loop.scheduleTask(
            in: .nanoseconds(Int64(answer.delay.components.seconds) * 1_000_000_000 + answer.delay.components.attoseconds / 1_000_000_000)
        ) {
            self.delayed -= 1
            self.write(answer, on: id, context: context)
            context.flush()
            self.closeIfIdle(context: context)
        }
    }

    private func write(_ answer: WebPushSimulator.Answer, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HPACKHeaders([(":status", String(answer.status))])
        // HTTP/2 has no connection-specific fields (RFC 9113 §8.2.2): `upgrade` is HTTP/1.1's.
        for header in answer.headers where !Self.connectionSpecific.contains(header.name) {
            headers.add(name: header.name, value: header.value)
        }
        if !answer.body.isEmpty { headers.add(name: "content-length", value: String(answer.body.count)) }
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: answer.body.isEmpty)))),
            promise: nil)
        if !answer.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: answer.body)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        }
        closeIfIdle(context: context)
    }

    static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    private func closeIfIdle(context: ChannelHandlerContext) {
        guard quiescing, pending.isEmpty, delayed == 0 else { return }
        context.flush()
        context.close(promise: nil)
    }
}
