import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// One TLS connection to the simulator, HTTP/2 or HTTP/1.1 as ALPN decides (RFC 7301): push
/// message requests over either, as push services take them, and the subscribers' WebSocket
/// upgrade (RFC 6455) over HTTP/1.1: hummingbird-websocket's HTTP/1.1 channel, and for HTTP/2
/// Hummingbird's `HTTP2Channel`, or with `frames` NIO's HTTP/2 handler with
/// ``PushServiceHTTP2Handler`` on its frames (a fraction of the CPU per request; opt-in until a
/// crash of the simulator seen once in a stressed test run is understood).
struct WebPushSimChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1WebSocketUpgradeChannel.Value)
        case http2(HTTP2Channel.Value)
        case http2Frames(any Channel)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let tls: NIOSSLContext
    let http1: HTTP1WebSocketUpgradeChannel
    let http2: HTTP2Channel
    /// The simulator, when HTTP/2 is served on the connection's frames.
    let frames: WebPushSimulator?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let http1 = http1, http2 = http2, frames = frames
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            let alpn = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result, channel in
                switch result {
                case .negotiated("h2"):
                    guard let simulator = frames else { return http2.setup(channel: channel, logger: logger).map { .http2($0) } }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server))
                        try channel.pipeline.syncOperations.addHandler(PushServiceHTTP2Handler(simulator: simulator))
                        return .http2Frames(channel)
                    }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).map { .http1($0) }
                case .negotiated(let other):
                    return channel.close().flatMap { channel.eventLoop.makeFailedFuture(UnexpectedProtocol(name: other)) }
                }
            }
            try channel.pipeline.syncOperations.addHandler(alpn)
            return Value(negotiated: alpn.protocolNegotiationResult, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            case .http2Frames(let connection): try await connection.closeFuture.get()
            }
        } catch {
            logger.debug("connection closed before its protocol was settled", metadata: ["error.type": "\(error)"])
        }
    }

    struct UnexpectedProtocol: Error { let name: String }
}
