import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs: TLS with ALPN `h2`, or cleartext with prior knowledge when the
/// configuration says so. Requests are streams of it, on its frames (``HTTP2ConnectionHandler``),
/// which keeps to the server's `SETTINGS_MAX_CONCURRENT_STREAMS` as it changes, holding new
/// streams until one is free.
final class HTTP2Connection: Sendable {
    let channel: any Channel
    let state: HTTP2ConnectionState
    private let streams: NIOLoopBound<HTTP2ConnectionHandler>
    private let authority: String
    private let scheme: String

    private init(
        channel: any Channel, streams: NIOLoopBound<HTTP2ConnectionHandler>, state: HTTP2ConnectionState, authority: String, scheme: String
    ) {
        self.channel = channel
        self.streams = streams
        self.state = state
        self.authority = authority
        self.scheme = scheme
    }

    static func connect(
        to endpoint: HTTP2Client.Endpoint, tls: NIOSSLContext?, connectTimeout: TimeAmount, liveness: HTTP2Liveness,
        responseIDHeader: String?,
        group: any EventLoopGroup
    ) async throws -> HTTP2Connection {
        let state = HTTP2ConnectionState(responseIDHeader: responseIDHeader)
        let serverHostname = endpoint.host.first?.isNumber == true || endpoint.host.contains(":") ? nil : endpoint.host
        let (channel, streams, ready) = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname)) }
                    try pipeline.addHandler(HTTP2ReadClockHandler(state: state))
                    try pipeline.addHandler(HTTP2FlushCoalescingHandler())
                    let ready = channel.eventLoop.makePromise(of: Void.self)
                    let streams = HTTP2ConnectionHandler(state: state, ready: ready, liveness: liveness)
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    // No server push; a large header list is never needed for an answer.
                    connection.initialSettings = [
                        HTTP2Setting(parameter: .enablePush, value: 0),
                        HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
                    ]
                    // The streams are this client's own, on the connection's frames (no multiplexer).
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .client, frameDelegate: streams, connectionConfiguration: connection))
                    try pipeline.addHandler(streams)
                    return (channel, NIOLoopBound(streams, eventLoop: channel.eventLoop), ready.futureResult)
                }
            }
        // No request before the server's SETTINGS: until then HTTP/2 assumes 100 streams, and APNs
        // allows one until a token is accepted.
        let timeout = channel.eventLoop.scheduleTask(in: connectTimeout) { channel.close(promise: nil) }
        // Cancelled on the loop the moment the SETTINGS arrive: were it cancelled only when this
        // task resumes, a stalled cooperative pool could let it fire after a good handshake and
        // close the connection (its first requests then went out again on a second one).
        ready.whenComplete { _ in timeout.cancel() }
        do {
            try await ready.get()
            timeout.cancel()
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            throw HTTP2ClientError("\(endpoint): no HTTP/2 SETTINGS from the server (\(error)); is it an HTTP/2 server with ALPN h2?")
        }
        state.lastRead.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
        return HTTP2Connection(
            channel: channel, streams: streams, state: state,
            authority: endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)",
            scheme: tls == nil ? "http" : "https")
    }

    /// Sends each request with `authorization` on a stream of its own, all opened in one turn of the
    /// event loop (and written with one flush). Never fails: every ending is an ``HTTP2Exchange``,
    /// in the order of `requests`.
    func execute(
        _ requests: some Collection<HTTP2Request>, authorization: String, timeout: TimeAmount, halt: HTTP2Halt? = nil
    ) -> EventLoopFuture<[HTTP2Exchange]> {
        let prepared = requests.map {
            (headers: hpackHeaders(for: $0, authorization: authorization), body: ByteBuffer(bytes: $0.body), recipient: $0.recipient)
        }
        let loop = channel.eventLoop
        let state = state
        let streams = streams
        return loop.flatSubmit {
            let handlers = prepared.map { headers, body, recipient in
                HTTP2StreamRequest(
                    headers: headers, body: body, connection: state,
                    completion: HTTP2ExchangeCompletion(promise: loop.makePromise(of: HTTP2Exchange.self)), halt: halt, recipient: recipient
                )
            }
            let deadline = HTTP2BatchDeadline(handlers: handlers, timeout: timeout, eventLoop: loop)
            let all = EventLoopFuture.whenAllSucceed(handlers.map(\.ended), on: loop)
            all.assumeIsolated().whenComplete { _ in deadline.cancel() }
            streams.value.enqueue(handlers)
            return all
        }
    }

    /// Apple's advice for APNs' small HPACK table, good for any server: `:path` and
    /// `authorization` as literals without indexing; each header as its ``HTTP2Request/Indexing``
    /// says (per-request values indexed only the first time on a connection).
    private func hpackHeaders(for request: HTTP2Request, authorization: String) -> HPACKHeaders {
        let firstTime = !state.namesIndexed.exchange(true, ordering: .relaxed)
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 6)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: scheme)
        headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
        headers.add(name: ":authority", value: authority)
        headers.add(name: "authorization", value: authorization, indexing: .nonIndexable)
        for header in request.headers {
            let indexing: HPACKIndexing =
                switch header.indexing {
                case .always: .indexable
                case .firstTimeOnly: firstTime ? .indexable : .nonIndexable
                case .never: .nonIndexable
                }
            headers.add(name: header.name, value: header.value, indexing: indexing)
        }
        headers.add(name: "content-length", value: String(request.body.count))
        return headers
    }

    func close() {
        channel.close(promise: nil)
    }
}
