import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A web device's connection to its push service's subscriber WebSocket (RFC 6455 over
/// HTTP/1.1, TLS for `wss:`), as `webpush-sim` serves it at `GET /subscription/<id>/ws`: every
/// text frame is passed on in order, pings are answered, and it ends when the service closes it,
/// the connection drops, or ``close()``.
final class PushServiceSocket: Sendable {
    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Largest message the device takes: a push message is at most 4,096 bytes, base64 and JSON
    /// around it a little more.
    static let maxMessageBytes = 64 << 10

    private let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>

    private init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) { self.channel = channel }

    /// The push service refused the upgrade: it no longer knows the subscription (unknown or
    /// expired), so connecting again cannot help; subscribing again does.
    struct Refused: Error, CustomStringConvertible {
        let path: String
        var description: String { "the push service refused the WebSocket upgrade at \(path) (unknown or expired subscription)" }
    }

    /// Connects and upgrades; throws when the connection fails, ``Refused`` when the service
    /// refuses the upgrade (an unknown or expired subscription).
    static func connect(
        to url: URL, tls: NIOSSLContext?, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> PushServiceSocket {
        guard let host = url.host, ["ws", "wss"].contains(url.scheme) else { throw SimulatorError("not a WebSocket URL: \(url)") }
        let secure = url.scheme == "wss"
        guard !secure || tls != nil else { throw SimulatorError("\(url) needs TLS") }
        let port = url.port ?? (secure ? 443 : 80)
        let path = (url.path.isEmpty ? "/" : url.path) + (url.query.map { "?" + $0 } ?? "")
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if secure, let tls {
                        // No SNI for an IP address (TLS forbids it): NIOSSL then checks the
                        // certificate's IP addresses against the peer's.
                        let name = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: maxMessageBytes,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: maxMessageBytes))
                                return .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
                    headers.add(name: "Content-Length", value: "0")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                    // The service writes its hello frame right behind the 101, often in the same
                    // read: forward those bytes to the WebSocket decoder (NIO drops them by default).
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        guard case .websocket(let channel) = try await upgrade.get() else { throw Refused(path: path) }
        return PushServiceSocket(channel: channel)
    }

    /// Reads until the connection ends, passing each text frame to `onText`; answers pings and
    /// the service's close. Returns when the service closed it or ``close()`` was called; throws
    /// when the connection failed.
    func run(onText: (String) -> Void) async throws {
        try await channel.executeThenClose { inbound, outbound in
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    onText(String(buffer: frame.unmaskedData))
                case .ping:
                    // A client's frames are masked (RFC 6455 §5.3).
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                case .connectionClose:
                    var data = frame.unmaskedData
                    let code = data.readWebSocketErrorCode() ?? .normalClosure
                    var reply = channel.channel.allocator.buffer(capacity: 2)
                    reply.write(webSocketErrorCode: code)
                    try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: reply))
                    return
                default:
                    continue
                }
            }
        }
    }

    /// Closes the connection; ``run(onText:)`` returns.
    func close() async {
        try? await channel.channel.close()
    }
}
