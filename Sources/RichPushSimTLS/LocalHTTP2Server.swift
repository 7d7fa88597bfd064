package import NIOCore
import NIOHPACK
package import NIOHTTP2
import NIOPosix
package import NIOSSL

/// A small HTTP/2 server over TLS for the local platform simulators: each stream's request
/// (headers and body, at most `maxBodyBytes`) goes to `handler` on the event loop, whose answer
/// is written at once. Read as raw HTTP/2 frames, with no HTTP/1 translation in between, so a
/// load test measures the client under test rather than the simulator.
package final class LocalHTTP2Server: Sendable {
    package struct Request: Sendable {
        package let method: String
        package let path: String
        /// Regular headers (no pseudo-headers), names in lowercase as HTTP/2 sends them.
        package let headers: [(name: String, value: String)]
        package let body: [UInt8]

        package init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
            self.method = method
            self.path = path
            self.headers = headers
            self.body = body
        }

        package func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]
        /// How long to hold the answer back (a slow server), without holding up other streams.
        package var delay: Duration = .zero

        package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// Answers one request; called on the connection's event loop, so it must not block.
    package typealias Handler = @Sendable (Request) -> Response

    private let channel: any Channel
    package let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Listens on `host:port` (0: a free port) with `tls` (its ALPN should offer `h2`),
    /// advertising `maxStreams` concurrent streams per connection.
    package static func start(
        host: String = "127.0.0.1", port: Int = 0, tls: TLSConfiguration, maxStreams: Int = 100, maxBodyBytes: Int = 64 * 1024,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, handler: @escaping Handler
    ) async throws -> LocalHTTP2Server {
        let channel = try await bind(
            host: host, port: port, tls: try NIOSSLContext(configuration: tls),
            settings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxStreams)], group: group
        ) {
            { stream in try stream.pipeline.syncOperations.addHandler(LocalHTTP2StreamHandler(maxBodyBytes: maxBodyBytes, handler: handler))
            }
        }
        return LocalHTTP2Server(channel: channel, port: channel.localAddress?.port ?? port)
    }

    package func stop() async throws {
        try await channel.close()
    }

    /// Sets up one stream's pipeline (called on its event loop).
    package typealias StreamSetup = @Sendable (any Channel) throws -> Void

    /// The listening socket every local simulator shares: TLS (or cleartext HTTP/2 with prior
    /// knowledge when `tls` is nil), HTTP/2 with `settings` (a 16 KiB header list limit added), and
    /// per connection a `StreamSetup` from `connection` (so a connection's streams can share state).
    package static func bind(
        host: String, port: Int, tls: NIOSSLContext?, settings: [HTTP2Setting], group: any EventLoopGroup,
        connection: @escaping @Sendable () -> StreamSetup
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    var configuration = NIOHTTP2Handler.ConnectionConfiguration()
                    configuration.initialSettings = settings + [HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024)]
                    let setup = connection()
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: configuration,
                        streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture { try setup(stream) }
                    }
                }
            }
            .bind(host: host, port: port).get()
    }
}

/// One stream: collects the request, answers it through the server's handler.
final class LocalHTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let maxBodyBytes: Int
    private let handler: LocalHTTP2Server.Handler
    private var headers: HPACKHeaders?
    private var body: [UInt8] = []
    private var tooLarge = false

    init(maxBodyBytes: Int, handler: @escaping LocalHTTP2Server.Handler) {
        self.maxBodyBytes = maxBodyBytes
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil { headers = frame.headers }
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(let bytes) = frame.data {
                if body.count + bytes.readableBytes > maxBodyBytes { tooLarge = true } else { body += bytes.readableBytesView }
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard let headers else { return }
        self.headers = nil
        let response: LocalHTTP2Server.Response
        if tooLarge {
            response = LocalHTTP2Server.Response(
                status: 413, headers: [("content-type", "text/plain")], body: Array("request body too large".utf8))
        } else {
            let request = LocalHTTP2Server.Request(
                method: headers.first(name: ":method") ?? "", path: headers.first(name: ":path") ?? "",
                headers: headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) }, body: body)
            response = handler(request)
        }
        if response.delay > .zero {
            context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(response.delay)) {
                self.write(response, context: context)
            }
        } else {
            write(response, context: context)
        }
    }

    private func write(_ response: LocalHTTP2Server.Response, context: ChannelHandlerContext) {
        var answer = HPACKHeaders()
        answer.add(name: ":status", value: String(response.status))
        for header in response.headers { answer.add(name: header.name, value: header.value) }
        answer.add(name: "content-length", value: String(response.body.count))
        if response.body.isEmpty {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: answer, endStream: true))), promise: nil)
        } else {
            context.write(wrapOutboundOut(.headers(.init(headers: answer))), promise: nil)
            context.writeAndFlush(
                wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(bytes: response.body)), endStream: true))), promise: nil)
        }
    }
}
