import AsyncHTTPClient
import Foundation
import Hiredis
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushCore
import RichPushFCM
import RichPushHTTP2
import Testing

/// `richpush fcm-sim` as a process: it makes a service account pointing at itself, and the
/// adapter, reading that file, gets a token and sends through it.
@Suite("fcm-sim process")
struct FCMSimProcessTests {
    @Test func aWorkerWithTheFileItWroteSendsThroughIt() async throws {
        try await withRedisServer { server in
            let port = try RedisServer.freePort()
            let file = server.directory.appendingPathComponent("fcm/service-account.json")
            let sim = try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "fcm-sim", "--port", String(port), "--service-account", file.path, "--make-credentials", "--log-requests",
                    "--unregistered", "50%", "--seed", "9", "--redis-url", server.url, "--no-forward",
                    "--cert-dir", server.directory.appendingPathComponent("fcm").path,
                ], logFile: server.directory.appendingPathComponent("fcm-sim.log"))
            var tls = TLSConfiguration.makeClientConfiguration()
            var http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                try await waitUntil(timeout: .seconds(60), "fcm-sim to listen") { sim.log.contains("listening") }
                #expect(sim.log.contains("https://127.0.0.1:\(port) (HTTP/2 over TLS"), "\(sim.log)")
                // Only with its CA: the certificate is the simulator's own.
                try await http.shutdown()
                tls.trustRoots = .certificates(
                    try NIOSSLCertificate.fromPEMFile(server.directory.appendingPathComponent("fcm/ca.pem").path))
                http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                let probe = try await http.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/token"), timeout: .seconds(30))
                #expect(probe.version == .http2, "Google's endpoints speak HTTP/2 to a client that offers it")
                let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the private key's file is the owner's only")
                let account = try FCMServiceAccount(json: Array(try Data(contentsOf: file)))
                let client = try HTTP2Client(
                    configuration: HTTP2Client.Configuration(
                        endpoint: HTTP2Client.Endpoint(url: "https://127.0.0.1:\(port)"),
                        trustRoots: try NIOSSLCertificate.fromPEMFile(server.directory.appendingPathComponent("fcm/ca.pem").path),
                        requestTimeout: LocalFCM.timeout))
                defer { client.shutdown() }
                let adapter = FCMPushAdapter(
                    client: client, projectID: account.projectID,
                    token: FCMAccessToken(
                        redis: RedisConnection(configuration: server.configuration),
                        prefix: String(uniqueKeyPrefix("fcm").dropLast()), account: account, http: http,
                        timeout: LocalFCM.timeout))
                let notification = RichNotification(
                    id: 7, message: "hi", richType: .text, contentType: "text/plain", payloadHash: "h", payloadSize: 2,
                    creator: "alice", target: "username:alice", createdAt: 0)
                let rendered = try PushRenderer().renderFCM(notification, collapseID: "7")
                let pushes = (0..<10).map {
                    OutgoingPush(
                        notification: 7,
                        installation: Installation(
                            id: "a\($0)", platform: .fcm, handle: "android-\($0)", tags: [], owner: "alice", updatedAt: 0),
                        rendered: rendered)
                }
                let outcomes = try await adapter.send(pushes)
                let sent = outcomes.filter { if case .sent = $0 { true } else { false } }.count
                let dead = outcomes.filter { if case .invalidToken = $0 { true } else { false } }.count
                #expect(sent + dead == 10 && sent > 0 && dead > 0, "\(outcomes)")
                let lines = sim.log.split(separator: "\n").filter { $0.hasPrefix("{") && !$0.contains("\"issued\"") }
                #expect(lines.count == 10)
            } catch {
                sim.signal(SIGTERM)
                _ = try await sim.wait(timeout: .seconds(10))
                try await http.shutdown()
                throw error
            }
            sim.signal(SIGTERM)
            // A deadline for a busy machine (CI saw this whole test take 79 s beside 790 others).
            #expect(try await sim.wait(timeout: .seconds(60)) == 0, "fcm-sim log: \(sim.log.suffix(2000))")
            try await http.shutdown()
        }
    }
}
