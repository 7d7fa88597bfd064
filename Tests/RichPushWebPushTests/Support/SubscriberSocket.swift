import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RedisTestSupport
import RichPushWebPushSim
import Synchronization

/// A user agent's connection to the simulator's subscriber WebSocket: TLS (trusting the
/// simulator's CA), HTTP/1.1 upgrade (RFC 6455), and every text frame decoded as a
/// ``SubscriberFrame``, kept in arrival order.
final class SubscriberSocket: Sendable {
    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    private let frames = Mutex<[SubscriberFrame]>([])
    private let closed = Mutex(false)
    private let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>

    private init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) { self.channel = channel }

    static func connect(port: Int, path: String, caPEM: String) async throws -> SubscriberSocket {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))
        tls.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture { .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel)) }
                    })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "localhost:\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                    // The hello frame can come in the same read as the 101: forward it, not drop it (NIO's default).
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        guard case .websocket(let channel) = try await upgrade.get() else {
            throw HarnessError("the WebSocket upgrade to \(path) was refused")
        }
        let socket = SubscriberSocket(channel: channel)
        Task { await socket.read() }
        return socket
    }

    private func read() async {
        do {
            try await channel.executeThenClose { inbound, _ in
                for try await frame in inbound {
                    if frame.opcode == .connectionClose { break }
                    guard frame.opcode == .text else { continue }
                    let decoded = try JSONDecoder().decode(SubscriberFrame.self, from: Data(String(buffer: frame.unmaskedData).utf8))
                    frames.withLock { $0.append(decoded) }
                }
            }
        } catch {}
        closed.withLock { $0 = true }
    }

    var isClosed: Bool { closed.withLock { $0 } }

    /// The messages received so far, in order.
    var messages: [PushMessage] { frames.withLock { $0.compactMap(\.message) } }

    func waitForHello() async throws {
        try await waitFor("the hello frame") { self.frames.withLock { $0.contains { $0.type == .hello } } }
    }

    /// Waits until `count` messages have arrived; returns them.
    @discardableResult
    func waitForMessages(_ count: Int) async throws -> [PushMessage] {
        try await waitFor("\(count) message(s)") { self.messages.count >= count }
        return messages
    }

    func close() async {
        try? await channel.channel.close()
        try? await waitFor("the socket to close") { self.isClosed }
    }

    private func waitFor(_ what: String, _ condition: @escaping () -> Bool) async throws {
        try await waitUntil(timeout: .seconds(30), what) { condition() }
    }
}
