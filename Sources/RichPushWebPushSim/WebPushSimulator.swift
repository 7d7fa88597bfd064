package import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdWebSocket
package import Logging
package import NIOCore
package import NIOSSL
import RichPushCore
import Synchronization

/// `richpush webpush-sim`: a local push service (RFC 8030) that refuses what the RFCs refuse.
///
/// Subscriptions are made with `POST /subscribe` (optionally restricted to an application server
/// key, RFC 8292 §4) and receive over a WebSocket (`GET /subscription/<id>/ws`, frames in
/// ``SubscriberFrame``). Push message requests to `POST /push/<id>` are checked as a push
/// service checks them (TTL, Urgency, Topic, `aes128gcm`, size, VAPID; see docs/webpush.md),
/// answered with the status a push service uses and autopush's JSON error body, and kept for an
/// offline subscriber until their TTL. Faults on demand: gone subscriptions (410, fixed per
/// subscription by the seed), 429 and 503 with `Retry-After`, delays.
package final class WebPushSimulator: Sendable {
    package struct Configuration: Sendable {
        /// The host in endpoint URLs and in the origin VAPID's `aud` must name (default: the
        /// listening host, 127.0.0.1 for 0.0.0.0).
        package var publicHost: String?
        /// The share of subscriptions that are gone (410), fixed per subscription and seed.
        package var gone: Double = 0
        /// Transient refusals of valid requests: 429 or 503 (with `Retry-After`) and their shares.
        package var transient: [(status: Int, share: Double)] = []
        /// Messages a subscription may get per clock minute before 429 with `Retry-After` (0: no
        /// limit); see ``SubscriptionRateLimit``.
        package var subscriptionRatePerMinute = 0
        /// Each push answer held back this many milliseconds (drawn per request), or not at all.
        package var delayMilliseconds: ClosedRange<Int>?
        package var seed: UInt64 = 1
        /// The longest TTL it keeps a message (a longer one is cut, and the 201's TTL says so:
        /// RFC 8030 §5.2). autopush's: 30 days.
        package var maxTTL = 2_592_000
        package var keptPerSubscription = 100
        package var keptTotal = 10_000
        package var maxSubscriptions = 100_000
        /// Serve HTTP/2 on the connection's frames (``PushServiceHTTP2Handler``) rather than
        /// through Hummingbird's HTTP/2 channel: about a sixth of the CPU per push request, which is
        /// what `scripts/bench-webpush.sh` runs. Off by default until a crash seen once in a
        /// stressed test run is understood.
        package var http2Frames = false
        /// The clock for TTLs and VAPID's `exp` (tests move it).
        package var now: @Sendable () -> Date = { Date() }

        package init() {}
    }

    let configuration: Configuration
    let store: SubscriptionStore
    let random: SimulationRandom
    private let originState = Mutex<String?>(nil)
    /// VAPID tokens already verified, so a cached token is parsed and verified once.
    let verifiedTokens = VerifiedTokens()
    /// Each subscription's rate and `Retry-After` windows.
    let rateLimit: SubscriptionRateLimit

    /// One JSON line per request (and per message written to a subscriber).
    package typealias RequestLog = @Sendable (String) -> Void
    let log: RequestLog?

    package init(configuration: Configuration = Configuration(), log: RequestLog? = nil) {
        self.configuration = configuration
        self.log = log
        random = SimulationRandom(seed: configuration.seed)
        rateLimit = SubscriptionRateLimit(perMinute: configuration.subscriptionRatePerMinute)
        store = SubscriptionStore(
            limits: .init(
                keptPerSubscription: configuration.keptPerSubscription, keptTotal: configuration.keptTotal,
                subscriptions: configuration.maxSubscriptions))
    }

    /// The push service's origin (RFC 6454 §6.1), known once it listens: what VAPID's `aud` must be.
    package var origin: String { originState.withLock { $0 } ?? "" }

    /// Subscriptions' messages not yet written to a subscriber.
    package func keptCount(subscriptionID: String) -> Int { store.keptCount(subscriptionID) }

    /// Whether a subscriber is connected for `subscriptionID`.
    package func isConnected(subscriptionID: String) -> Bool { store.isConnected(subscriptionID) }

    /// The server: HTTP/2 and HTTP/1.1 over TLS with `tls` (ALPN `h2`, `http/1.1`), or cleartext
    /// HTTP/1.1 when `tls` is nil; WebSockets over HTTP/1.1 either way.
    package func application(
        host: String = "127.0.0.1", port: Int, tls: TLSConfiguration?, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let router = Router()
        router.middlewares.add(SimulatorResponder(simulator: self))
        let webSockets = Router(context: BasicWebSocketRequestContext.self)
        addSubscriberRoute(to: webSockets)
        let server: HTTPServerBuilder
        if var tls {
            tls.applicationProtocols = ["h2", "http/1.1"]
            let context = try NIOSSLContext(configuration: tls)
            let webSocketResponder = webSockets.buildResponder()
            // A client that holds its connection open past the GOAWAY of a graceful stop is
            // closed 5 s later, so SIGTERM ends the simulator whatever its clients do.
            let http2 = HTTP2ChannelConfiguration(gracefulCloseTimeout: .seconds(5))
            server = HTTPServerBuilder { responder in
                WebPushSimChannel(
                    tls: context,
                    http1: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder, configuration: .init()),
                    http2: HTTP2Channel(responder: responder, configuration: http2), frames: self.configuration.http2Frames ? self : nil)
            }
        } else {
            server = .http1WebSocketUpgrade(webSocketRouter: webSockets)
        }
        let scheme = tls == nil ? "http" : "https"
        let publicHost = configuration.publicHost ?? (host == "0.0.0.0" ? "127.0.0.1" : host)
        return Application(
            router: router, server: server, configuration: .init(address: .hostname(host, port: port), serverName: "webpush-sim"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                let defaultPort = scheme == "https" ? 443 : 80
                self.originState.withLock { $0 = "\(scheme)://\(publicHost)" + (port == defaultPort ? "" : ":\(port)") }
                await onServerRunning(channel)
            }, logger: logger)
    }

    func logLine(_ object: [String: Any?]) {
        guard let log else { return }
        var line: [String: Any] = ["at": configuration.now().timeIntervalSince1970]
        for (key, value) in object { line[key] = value ?? NSNull() }
        log(String(decoding: (try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])) ?? Data(), as: UTF8.self))
    }
}
