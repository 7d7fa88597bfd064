import Crypto
import Foundation
import NIOSSL
package import RichPushAPNS
package import RichPushAPNSSim
package import RichPushCore
package import RichPushHTTP2
package import RichPushSimTLS
import Synchronization

/// An in-process apns-sim over TLS on loopback with a test CA of its own, an ``HTTP2Client``
/// that trusts it, and what the simulator logged and accepted: the one way the tests stand up
/// a local APNs and a client of it.
package final class LocalAPNS: Sendable {
    package let server: APNSSimulatorServer
    package let client: HTTP2Client
    /// The CA and server certificate the simulator serves (another client can trust them).
    package let certificates: LocalCertificates
    private let record: Record

    /// The topic, team and key id of the default rules.
    package static let topic = "com.example.richpush"
    package static let teamID = "DEF123GHIJ"
    package static let keyID = "ABC123DEFG"
    /// The default key: fresh per test process, never a real one.
    package static let pem = P256.Signing.PrivateKey().pemRepresentation

    private init(server: APNSSimulatorServer, client: HTTP2Client, certificates: LocalCertificates, record: Record) {
        self.server = server
        self.client = client
        self.certificates = certificates
        self.record = record
    }

    /// A signing key (the default key, team and key id unless given).
    package static func signer(_ pem: String = pem, keyID: String = keyID, teamID: String = teamID) throws -> APNSSigningKey {
        try APNSSigningKey(pem: pem, keyID: keyID, teamID: teamID)
    }

    /// Apple's checks for the default key and topic; `otherEnvironmentTokens`: device tokens
    /// refused as the other environment's (production's for a sandbox, and the reverse).
    package static func rules(otherEnvironmentTokens: Set<String> = []) throws -> APNSServerRules {
        APNSServerRules(
            token: APNSProviderTokenCheck(teamID: teamID, keys: [keyID: try signer().publicKey]), topics: [topic],
            otherEnvironmentTokens: otherEnvironmentTokens)
    }

    /// Starts the simulator with `rules` (the default key and topic unless given) and a client
    /// of it with `connections`, `timeout` (per request) and `responseIDHeader` (nil: the client makes
    /// the id itself). The timeout is a minute: with every suite running at once on 2 cores, 94 of
    /// `goAwayMidwayLosesNothingAndSendsNothingTwice`'s 1,000 requests outlived 10 s; a test of
    /// timeouts gives its own. A new connection's TLS handshake and SETTINGS get as long (at least
    /// 10 s): `aHoldOnTheSandboxLeavesProductionSending` saw its second connection closed
    /// unready after 10 s in a full run (2026-12-07).
    package static func start(
        rules: APNSServerRules? = nil, maxStreams: Int = 1000, faults: APNSFaultPlan = APNSFaultPlan(),
        timeout: Duration = .seconds(60), connections: Int = 2,
        responseIDHeader: String? = "apns-id", pingTimeout: Duration? = nil
    ) async throws -> LocalAPNS {
        let certificates = try LocalCertificates.generate()
        let record = Record()
        let server = try await APNSSimulatorServer.start(
            certificates: certificates, rules: try rules ?? Self.rules(), maxStreams: maxStreams,
            faults: faults, log: { record.log($0) }, forward: { record.accept($0) })
        do {
            let client = try HTTP2Client(
                configuration: HTTP2Client.Configuration(
                    endpoint: HTTP2Client.Endpoint(host: "localhost", port: server.port, usesTLS: true),
                    trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)), connections: connections,
                    requestTimeout: timeout, connectTimeout: max(timeout, .seconds(10)), responseIDHeader: responseIDHeader,
                    pingTimeout: pingTimeout))
            return LocalAPNS(server: server, client: client, certificates: certificates, record: record)
        } catch {
            try await server.stop()
            throw error
        }
    }

    package var port: Int { server.port }

    /// The simulator's request log, one JSON line per request.
    package var lines: [String] { record.lines.withLock { $0 } }

    /// The request log as JSON objects.
    package var requests: [[String: Any]] {
        lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The pushes it accepted, in order.
    package var accepted: [APNSSimulatorServer.AcceptedPush] { record.accepted.withLock { $0 } }

    package func stop() async throws {
        client.shutdown()
        try await server.stop()
    }

    /// A silent push for notification `notification` to a device with `token`.
    package static func push(
        token: String, notification: Int = 42, installation: String? = nil, registeredAt: Int64 = 0,
        environment: APNSEnvironment = .production
    ) -> OutgoingPush {
        OutgoingPush(
            notification: notification,
            installation: Installation(
                id: installation ?? "inst-\(token.suffix(8))", platform: .apns, handle: token, tags: [],
                owner: "alice", updatedAt: registeredAt, apnsEnvironment: environment),
            rendered: RenderedPush(
                payload: Array(#"{"aps":{"content-available":1},"richId":"\#(notification)"}"#.utf8),
                pushType: "background", priority: 5, expiration: Int(Date().timeIntervalSince1970) + 3600,
                collapseID: String(notification)))
    }

    /// 64 hex digits, distinct per index.
    package static func token(_ index: Int) -> String { String(format: "%064lx", index) }

    package static func request(token: String, notification: Int = 42, topic: String = topic) throws -> APNSRequest {
        try APNSRequest(push: push(token: token, notification: notification), topic: topic)
    }

    /// A provider token of the default key, issued now.
    package static func bearer() throws -> String { try signer().token(issuedAt: Date()) }
}

/// What the simulator reports, kept as it comes (its callbacks run on event loops: no blocking).
private final class Record: Sendable {
    let lines = Mutex<[String]>([])
    let accepted = Mutex<[APNSSimulatorServer.AcceptedPush]>([])
    func log(_ line: String) { lines.withLock { $0.append(line) } }
    func accept(_ push: APNSSimulatorServer.AcceptedPush) { accepted.withLock { $0.append(push) } }
}
