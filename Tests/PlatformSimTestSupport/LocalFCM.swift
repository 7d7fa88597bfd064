package import AsyncHTTPClient
import Foundation
import NIOSSL
import RedisTestSupport
import RichPushFCM
package import RichPushFCMSim
package import RichPushHTTP2
import RichPushSimTLS
import Synchronization

/// fcm-sim on loopback over HTTP/2 and TLS with a test CA of its own, with clients that trust
/// it: `client` for messages:send (the adapter's), `http` for the token endpoint; and what the
/// simulator logged and accepted. The one way the tests stand up a local FCM.
package struct LocalFCM: Sendable {
    package let simulator: FCMSimulator
    package let port: Int
    package let client: HTTP2Client
    package let http: HTTPClient
    /// The request log, one JSON object per request.
    package let requests: @Sendable () -> [[String: Any]]
    /// The messages it accepted, in order.
    package let accepted: @Sendable () -> [FCMSimulator.Accepted]
    /// Loopback answers in milliseconds, but the test run starts some 300 tests at once on 2
    /// cores; 5 and 10 s deadlines were seen to pass there (CI, stop 24). No test here waits
    /// for a timeout.
    package static let timeout = Duration.seconds(30)

    /// The token endpoint of a simulator on `port` (the audience its assertions must name).
    package static func tokenURI(port: Int) -> String { "https://127.0.0.1:\(port)/token" }

    /// Runs fcm-sim for project `projectID` on a free port for `body`; it accepts assertions of
    /// the service account `clientEmail` signed by the key of `publicKeyPEM` (key id `k1`). The
    /// port is known before the server binds it (the service account names it), so a parallel
    /// test could take it first: a failed bind tries another port.
    package static func with<T: Sendable>(
        projectID: String = "richpush-demo", clientEmail: String = "fcm@richpush-demo.iam.gserviceaccount.com",
        publicKeyPEM: String, _ change: (inout FCMSimulator.Configuration) -> Void = { _ in },
        _ body: (LocalFCM) async throws -> T
    ) async throws -> T {
        let certificates = try LocalCertificates.generate()
        let roots = try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8))
        for attempt in 1...5 {
            let port = try RedisServer.freePort()
            var configuration = FCMSimulator.Configuration(
                projectID: projectID,
                check: try FCMAssertionCheck(
                    clientEmail: clientEmail, keyID: "k1", publicKeyPEM: publicKeyPEM, audiences: [tokenURI(port: port)]))
            change(&configuration)
            let record = Record()
            let simulator = FCMSimulator(configuration: configuration, log: { record.log($0) }, forward: { record.accept($0) })
            let server: LocalHTTP2Server
            do {
                server = try await simulator.start(port: port, tls: try certificates.serverTLS(applicationProtocols: ["h2"]))
            } catch {
                if attempt == 5 { throw error }
                continue
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(roots)
            // A connect timeout of 30 s, not AHC's 10: a full test run on 2 cores once took longer
            // to accept the token endpoint's connection (as WebPushSimHarness found for its own).
            let http = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(30))))
            let client: HTTP2Client
            do {
                client = try HTTP2Client(
                    configuration: HTTP2Client.Configuration(
                        endpoint: HTTP2Client.Endpoint(host: "127.0.0.1", port: port, usesTLS: true),
                        trustRoots: roots, requestTimeout: timeout))
            } catch {
                try? await http.shutdown()
                try? await server.stop()
                throw error
            }
            let local = LocalFCM(
                simulator: simulator, port: port, client: client, http: http, requests: { record.requests },
                accepted: { record.accepted.withLock { $0 } })
            let result: T
            do {
                result = try await body(local)
            } catch {
                client.shutdown()
                try? await http.shutdown()
                try? await server.stop()
                throw error
            }
            client.shutdown()
            try await http.shutdown()
            try await server.stop()
            return result
        }
        throw LocalFCMError()
    }
}

/// Unreachable: the last of the attempts to bind throws its own error.
private struct LocalFCMError: Error {}

/// What the simulator reports, kept as it comes.
private final class Record: Sendable {
    let lines = Mutex<[String]>([])
    let accepted = Mutex<[FCMSimulator.Accepted]>([])
    func log(_ line: String) { lines.withLock { $0.append(line) } }
    func accept(_ message: FCMSimulator.Accepted) { accepted.withLock { $0.append(message) } }
    var requests: [[String: Any]] {
        lines.withLock { $0 }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}
