import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import RichPushSimTLS
import RichPushWebPushSim
import ServiceLifecycle
import Synchronization
import Testing

/// A clock the tests move: TTLs and VAPID's `exp` are read from it.
final class SimClock: Sendable {
    private let offset = Mutex<Double>(0)
    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }
    func advance(seconds: Double) { offset.withLock { $0 += seconds } }
}

/// `webpush-sim` running in this process on a free loopback port with its own CA, and an
/// AsyncHTTPClient that trusts that CA (and only it).
struct WebPushSimHarness: Sendable {
    struct Subscription: Sendable {
        let endpoint: String
        let id: String
        let webSocket: String
    }

    struct Answer: Sendable {
        let status: Int
        let headers: [(name: String, value: String)]
        let json: [String: String]
        let version: HTTPVersion

        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        var reason: String? { json["reason"] }
    }

    let simulator: WebPushSimulator
    let port: Int
    let clock: SimClock
    let http: HTTPClient
    let caPEM: String
    private let log: LogBox

    var origin: String { simulator.origin }
    var logLines: [String] { log.lines.withLock { $0 } }

    private init(simulator: WebPushSimulator, port: Int, clock: SimClock, http: HTTPClient, caPEM: String, log: LogBox) {
        self.simulator = simulator
        self.port = port
        self.clock = clock
        self.http = http
        self.caPEM = caPEM
        self.log = log
    }

    static func with(
        _ configure: (inout WebPushSimulator.Configuration) -> Void = { _ in },
        _ body: (WebPushSimHarness) async throws -> Void
    ) async throws {
        let clock = SimClock()
        var configuration = WebPushSimulator.Configuration()
        configuration.now = { clock.now() }
        configure(&configuration)
        let lines = LogBox()
        let simulator = WebPushSimulator(configuration: configuration, log: { line in lines.append(line) })
        let certificates = try LocalCertificates.generate()
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "webpush-sim-test")
        logger.logLevel = .warning
        let application = try simulator.application(
            port: 0, tls: try certificates.serverTLS(applicationProtocols: ["h2", "http/1.1"]), logger: logger
        ) { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: application)], logger: logger))
        let server = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            _ = await server.result
            throw HarnessError("webpush-sim did not start")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)))
        // A connect may wait 30 s (the client's default is 10 s): in a full suite on a busy 2-core
        // machine the shared event loops stalled past 10 s, and every simulator test of that
        // stretch failed with `connectTimeout`.
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(30))))
        let harness = WebPushSimHarness(simulator: simulator, port: port, clock: clock, http: http, caPEM: certificates.caPEM, log: lines)
        do {
            try await body(harness)
        } catch {
            try? await http.shutdown()
            server.cancel()
            _ = await server.result
            throw error
        }
        try await http.shutdown()
        await group.triggerGracefulShutdown()
        try await server.value
    }

    /// `POST /subscribe`, restricted to `applicationServerKey` when given.
    func subscribe(applicationServerKey: P256.Signing.PublicKey? = nil) async throws -> Subscription {
        var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/subscribe")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        let body = applicationServerKey.map { "{\"applicationServerKey\":\"\(TestSender.base64URL($0.x963Representation))\"}" } ?? "{}"
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await http.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 1 << 16)
        #expect(response.status == .created)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: data)) as? [String: String])
        return Subscription(
            endpoint: try #require(object["endpoint"]), id: try #require(object["subscriptionId"]),
            webSocket: try #require(object["webSocket"]))
    }

    /// A request to `url` with `headers` and `body`, as any sender would make it.
    func send(_ method: HTTPMethod = .POST, _ url: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await http.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 1 << 16)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any] ?? [:]
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            json: object.mapValues { "\($0)" }, version: response.version)
    }

    /// A push to `subscription` built as the RFCs want it, with `change` applied to its headers.
    func push(
        _ subscription: Subscription, sender: TestSender, ttl: String? = "60", topic: String? = nil, body: [UInt8]? = nil,
        change: (inout [(String, String)]) -> Void = { _ in }
    ) async throws -> Answer {
        var headers: [(String, String)] = [
            ("content-encoding", "aes128gcm"), ("authorization", sender.authorization(audience: origin, now: clock.now())),
        ]
        if let ttl { headers.append(("ttl", ttl)) }
        if let topic { headers.append(("topic", topic)) }
        change(&headers)
        return try await send(.POST, subscription.endpoint, headers: headers, body: body ?? TestSender.aes128gcmBody(plaintextBytes: 100))
    }

    /// A subscriber connected to `subscription`'s WebSocket (after its `hello`).
    func connect(_ subscription: Subscription) async throws -> SubscriberSocket {
        let path = String(subscription.webSocket.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
        let socket = try await SubscriberSocket.connect(port: port, path: path, caPEM: caPEM)
        try await socket.waitForHello()
        return socket
    }
}

final class LogBox: Sendable {
    let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
