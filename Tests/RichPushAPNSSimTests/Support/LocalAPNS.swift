import Foundation
import NIOSSL
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import Synchronization
import RichPushSimTLS
import RichPushHTTP2

/// An in-process apns-sim over TLS on loopback, an ``HTTP2Client`` that trusts it, and the
/// simulator's request log, parsed.
final class LocalAPNS: Sendable {
    let server: APNSSimulatorServer
    let client: HTTP2Client
    private let lines: Mutex<[String]>
    static let topic = "com.example.richpush"

    private init(server: APNSSimulatorServer, client: HTTP2Client) {
        self.server = server
        self.client = client
        self.lines = Mutex([])
    }

    /// `otherEnvironmentTokens`: device tokens this simulator refuses as Apple's other service's.
    static func start(maxStreams: Int = 1000, faults: APNSFaultPlan = APNSFaultPlan(), timeout: Duration = .seconds(10),
                      connections: Int = 2, otherEnvironmentTokens: Set<String> = []) async throws -> LocalAPNS {
        let certificates = try LocalCertificates.generate()
        let log = LogSink()
        let base = try APNSServerRulesTests.rules()
        let rules = APNSServerRules(token: base.token, topics: base.topics, otherEnvironmentTokens: otherEnvironmentTokens)
        let server = try await APNSSimulatorServer.start(certificates: certificates, rules: rules, maxStreams: maxStreams,
                                                         faults: faults, log: { log.append($0) })
        let client = try HTTP2Client(configuration: HTTP2Client.Configuration(
            endpoint: HTTP2Client.Endpoint(host: "localhost", port: server.port, usesTLS: true),
            trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)), connections: connections, requestTimeout: timeout,
            responseIDHeader: "apns-id"))
        let local = LocalAPNS(server: server, client: client)
        log.target.withLock { $0 = local }
        return local
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// The simulator's log lines as JSON objects.
    var requests: [[String: Any]] {
        lines.withLock { $0 }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    func stop() async throws {
        client.shutdown()
        try await server.stop()
    }

    /// A silent push for notification `notification` to a device with `token`.
    static func push(token: String, notification: Int = 42, installation: String? = nil, registeredAt: Int64 = 0,
                     environment: APNSEnvironment = .production) -> OutgoingPush {
        OutgoingPush(notification: notification,
                     installation: Installation(id: installation ?? "inst-\(token.suffix(8))", platform: .apns, handle: token, tags: [],
                                                owner: "alice", updatedAt: registeredAt, apnsEnvironment: environment),
                     rendered: RenderedPush(payload: Array(#"{"aps":{"content-available":1},"richId":"\#(notification)"}"#.utf8),
                                            pushType: "background", priority: 5, expiration: Int(Date().timeIntervalSince1970) + 3600,
                                            collapseID: String(notification)))
    }

    /// 64 hex digits, distinct per index.
    static func token(_ index: Int) -> String { String(format: "%064lx", index) }

    static func request(token: String, notification: Int = 42, topic: String = topic) throws -> APNSRequest {
        try APNSRequest(push: push(token: token, notification: notification), topic: topic)
    }

    static func bearer() throws -> String { try APNSServerRulesTests.signer().token(issuedAt: Date()) }
}

/// Forwards log lines to the ``LocalAPNS`` once it exists (the server starts first).
private final class LogSink: Sendable {
    let target = Mutex<LocalAPNS?>(nil)
    func append(_ line: String) { target.withLock { $0 }?.append(line) }
}
