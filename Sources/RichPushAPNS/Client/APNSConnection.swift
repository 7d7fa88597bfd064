import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs: TLS with ALPN `h2`, or cleartext with prior knowledge when the
/// configuration says so. Requests are streams of it; the HTTP/2 handler keeps to the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` as it changes, holding new streams until one is free.
final class APNSConnection: Sendable {
    let channel: any Channel
    let state: APNSConnectionState
    private let scheduler: NIOLoopBound<APNSStreamScheduler>
    private let authority: String
    private let scheme: String

    private init(channel: any Channel, scheduler: NIOLoopBound<APNSStreamScheduler>, state: APNSConnectionState, authority: String, scheme: String) {
        self.channel = channel
        self.scheduler = scheduler
        self.state = state
        self.authority = authority
        self.scheme = scheme
    }

    static func connect(to endpoint: APNSClient.Endpoint, tls: NIOSSLContext?, connectTimeout: TimeAmount,
                        group: any EventLoopGroup) async throws -> APNSConnection {
        let state = APNSConnectionState()
        let serverHostname = endpoint.host.first?.isNumber == true || endpoint.host.contains(":") ? nil : endpoint.host
        let (channel, scheduler, ready) = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname)) }
                    try pipeline.addHandler(APNSReadClockHandler(state: state))
                    try pipeline.addHandler(APNSFlushCoalescingHandler())
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    // No server push; a large header list is never needed for an answer.
                    connection.initialSettings = [HTTP2Setting(parameter: .enablePush, value: 0),
                                                  HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024)]
                    var streams = NIOHTTP2Handler.StreamConfiguration()
                    streams.targetWindowSize = 64 * 1024
                    let multiplexer = try pipeline.configureHTTP2Pipeline(mode: .client, connectionConfiguration: connection,
                                                                          streamConfiguration: streams) { stream in
                        // APNs opens no streams of its own: refuse any.
                        stream.close()
                    }
                    let ready = channel.eventLoop.makePromise(of: Void.self)
                    let scheduler = APNSStreamScheduler(multiplexer: multiplexer, eventLoop: channel.eventLoop)
                    try pipeline.addHandler(APNSRootStreamHandler(state: state, scheduler: scheduler, ready: ready))
                    return (channel, NIOLoopBound(scheduler, eventLoop: channel.eventLoop), ready.futureResult)
                }
            }
        // No request before the server's SETTINGS: until then HTTP/2 assumes 100 streams, and APNs
        // allows one until a token is accepted.
        let timeout = channel.eventLoop.scheduleTask(in: connectTimeout) { channel.close(promise: nil) }
        do {
            try await ready.get()
            timeout.cancel()
        } catch {
            timeout.cancel()
            channel.close(promise: nil)
            throw APNSConfigurationError("\(endpoint): no HTTP/2 SETTINGS from the server (\(error)); is it an HTTP/2 server with ALPN h2?")
        }
        state.lastRead.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
        return APNSConnection(channel: channel, scheduler: scheduler, state: state,
                              authority: endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)",
                              scheme: tls == nil ? "http" : "https")
    }

    /// Sends each request with `bearer` on a stream of its own, all opened in one turn of the
    /// event loop (and written with one flush). Never fails: every ending is an ``APNSExchange``,
    /// in the order of `requests`.
    func execute(_ requests: some Collection<APNSRequest>, bearer: String, timeout: TimeAmount) -> EventLoopFuture<[APNSExchange]> {
        let prepared = requests.map { (headers: hpackHeaders(for: $0, bearer: bearer), body: ByteBuffer(bytes: $0.body)) }
        let loop = channel.eventLoop
        let state = state
        let scheduler = scheduler
        return loop.flatSubmit {
            let handlers = prepared.map { headers, body in
                APNSStreamHandler(headers: headers, body: body, connection: state,
                                  completion: APNSExchangeCompletion(promise: loop.makePromise(of: APNSExchange.self)))
            }
            let deadline = APNSBatchDeadline(handlers: handlers, timeout: timeout, eventLoop: loop)
            let all = EventLoopFuture.whenAllSucceed(handlers.map(\.ended), on: loop)
            all.assumeIsolated().whenComplete { _ in deadline.cancel() }
            scheduler.value.enqueue(handlers)
            return all
        }
    }

    /// Apple's advice for its small HPACK table: `:path` and `authorization` as literals without
    /// indexing; `apns-id`, `apns-expiration` and `apns-collapse-id` indexed the first time on a
    /// connection and literal without indexing afterwards; the rest (same value every time) indexed.
    private func hpackHeaders(for request: APNSRequest, bearer: String) -> HPACKHeaders {
        let firstTime = !state.namesIndexed.exchange(true, ordering: .relaxed)
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 6)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: scheme)
        headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
        headers.add(name: ":authority", value: authority)
        headers.add(name: "authorization", value: "bearer " + bearer, indexing: .nonIndexable)
        for header in request.headers {
            let perRequest = header.name == "apns-id" || header.name == "apns-expiration" || header.name == "apns-collapse-id"
            headers.add(name: header.name, value: header.value, indexing: perRequest && !firstTime ? .nonIndexable : .indexable)
        }
        headers.add(name: "content-length", value: String(request.body.count))
        return headers
    }

    func close() {
        channel.close(promise: nil)
    }
}
