import Foundation
public import NIOCore
import NIOHTTP1
import NIOHTTP2
public import NIOPosix
import NIOSSL
import RichPushAPNS
import Synchronization

/// The local APNs: HTTP/2 over TLS (ALPN `h2`) with the certificate of ``LocalCertificates``,
/// judging every request by ``APNSServerRules`` and answering as Apple does (`apns-id` on every
/// answer; `{"reason": …}` on refusals). Like Apple with token authentication, a connection
/// allows one stream until a request with a valid token succeeds, then `maxStreams`.
public final class APNSSimulatorServer: Sendable {
    public let port: Int
    private let channel: any Channel

    /// One line of JSON per request (method, path, status, reason, apns-id, push type, topic).
    public typealias RequestLog = @Sendable (String) -> Void

    /// A push Apple would have accepted, for whatever stands in for the device (the hub).
    public struct AcceptedPush: Sendable {
        public let deviceToken: String
        public let headers: [String: String]
        public let payload: [UInt8]
        public let apnsID: String
    }

    /// Called on the connection's event loop for each accepted push: must not block.
    public typealias Forward = @Sendable (AcceptedPush) -> Void

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    public static func start(host: String = "127.0.0.1", port: Int = 0, certificates: LocalCertificates, rules: APNSServerRules,
                             maxStreams: Int = 1000, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                             log: RequestLog? = nil, forward: Forward? = nil) async throws -> APNSSimulatorServer {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificates.certificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificates.privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        tls.minimumTLSVersion = .tlsv12
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    let connection = ConnectionState()
                    return channel.configureHTTP2Pipeline(
                        mode: .server, initialLocalSettings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 1),
                                                              HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024)],
                        inboundStreamInitializer: { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(),
                                    StreamHandler(rules: rules, connection: connection, maxStreams: maxStreams, log: log, forward: forward),
                                ])
                            }
                        }).map { _ in }
                }
            }
            .bind(host: host, port: port).get()
        return APNSSimulatorServer(channel: channel, port: channel.localAddress?.port ?? port)
    }

    public func stop() async throws {
        try await channel.close()
    }
}

/// Per connection: whether a valid token has been seen (the stream limit was raised).
final class ConnectionState: Sendable {
    let raised = Atomic<Bool>(false)
}

/// One request on one HTTP/2 stream, seen through the HTTP/1 codec.
final class StreamHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: used on its stream's event loop only, as NIO handlers are.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let rules: APNSServerRules
    let connection: ConnectionState
    let maxStreams: Int
    let log: APNSSimulatorServer.RequestLog?
    let forward: APNSSimulatorServer.Forward?
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private static let maxBody = 64 * 1024

    init(rules: APNSServerRules, connection: ConnectionState, maxStreams: Int, log: APNSSimulatorServer.RequestLog?,
         forward: APNSSimulatorServer.Forward?) {
        self.rules = rules
        self.connection = connection
        self.maxStreams = maxStreams
        self.log = log
        self.forward = forward
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var buffer):
            // Apple refuses more than 4 KiB anyway; past 64 KiB stop collecting.
            if body.count < Self.maxBody, let bytes = buffer.readBytes(length: min(buffer.readableBytes, Self.maxBody - body.count)) { body += bytes }
        case .end:
            guard let head else { return }
            respond(context: context, to: head)
        }
    }

    private func respond(context: ChannelHandlerContext, to head: HTTPRequestHead) {
        let request = APNSIncomingRequest(method: head.method.rawValue, path: head.uri,
                                          headers: head.headers.map { (name: $0.name.lowercased(), value: $0.value) }, body: body)
        let verdict = rules.verdict(request)
        var headers = HTTPHeaders()
        let status: Int
        var payload: [UInt8] = []
        var reason: String?
        let apnsID: String
        switch verdict {
        case .accepted(let id):
            status = 200
            apnsID = id
            if let forward {
                var fields: [String: String] = [:]
                for (name, value) in request.headers where name != "authorization" { fields[name] = value }
                forward(APNSSimulatorServer.AcceptedPush(deviceToken: String(head.uri.dropFirst("/3/device/".count)), headers: fields,
                                                         payload: body, apnsID: id))
            }
            if !connection.raised.exchange(true, ordering: .relaxed), let parent = context.channel.parent {
                // The first valid token on this connection: more streams from now on.
                let settings = HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: maxStreams)])))
                parent.writeAndFlush(settings, promise: nil)
            }
        case .refused(let code, let why):
            status = code
            apnsID = head.headers.first(name: "apns-id") ?? UUID().uuidString.lowercased()
            reason = why.rawValue
            payload = Array(#"{"reason":"\#(why.rawValue)"}"#.utf8)
            headers.add(name: "content-type", value: "application/json")
        }
        headers.add(name: "apns-id", value: apnsID)
        headers.add(name: "content-length", value: String(payload.count))
        log?(Self.logLine(request: request, status: status, reason: reason, apnsID: apnsID))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: HTTPResponseStatus(statusCode: status), headers: headers))), promise: nil)
        if !payload.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: payload)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        self.head = nil
        body = []
    }

    static func logLine(request: APNSIncomingRequest, status: Int, reason: String?, apnsID: String) -> String {
        func header(_ name: String) -> Any { request.headers.first { $0.name == name }?.value ?? NSNull() }
        let object: [String: Any] = ["method": request.method, "path": request.path, "status": status, "reason": reason ?? NSNull(),
                                     "apnsID": apnsID, "pushType": header("apns-push-type"), "topic": header("apns-topic"),
                                     "bytes": request.body.count, "at": Date().timeIntervalSince1970]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
