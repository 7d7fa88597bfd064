import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import RedisTestSupport
import RichPushCore
import Testing

/// Browsers through `richpush worker --adapter webpush` and `richpush webpush-sim`, both real
/// processes: the worker encrypts to each subscription and signs with the VAPID key it was given,
/// and the push service, which checks all RFC 8030/8291/8292 ask, accepts every push.
@Suite("Web Push through webpush-sim", .serialized)
struct WebPushFleetTests {
    @Test func everyBrowserGetsEveryNotification() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "webpush") { native in
                let sim = try await native.startWebPushSim()
                try await waitUntil(timeout: .seconds(60), "webpush-sim to listen") { sim.process.log.contains("listening") }
                let vapid = P256.Signing.PrivateKey()
                let keyFile = server.directory.appendingPathComponent("vapid.pem")
                try Data(vapid.pemRepresentation.utf8).write(to: keyFile)
                // Three browsers subscribe, restricted to our application server key, and register.
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(try #require(sim.caFile).path))
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                do {
                    for index in 0..<3 {
                        var request = HTTPClientRequest(url: sim.url + "/subscribe")
                        request.method = .POST
                        let serverKey = Data(vapid.publicKey.x963Representation).base64EncodedString()
                            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                        request.body = .bytes(ByteBuffer(string: "{\"applicationServerKey\":\"\(serverKey)\"}"))
                        let response = try await http.execute(request, timeout: .seconds(30))
                        let body = try await response.body.collect(upTo: 1 << 16)
                        let endpoint = try #require((try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["endpoint"] as? String)
                        let browser = P256.KeyAgreement.PrivateKey()
                        let keys = WebPushKeys(p256dh: Base64URL.encode(browser.publicKey.x963Representation),
                                               auth: Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255) }))
                        _ = try await native.installations.save(Installation(id: "web\(index)", platform: .webpush, handle: endpoint, tags: ["username:alice"],
                                                                             owner: "alice", updatedAt: 0, webPushKeys: keys), limits: RegistrationLimits())
                    }
                    try await http.shutdown()
                } catch {
                    try? await http.shutdown()
                    throw error
                }
                let workers = try await native.startWorkers(["w1", "w2"], adapter: "webpush", sim.workerArguments + [
                    "--webpush-vapid-key-file", keyFile.path, "--webpush-subject", "mailto:ops@example.com",
                ])
                let ids = try await native.createNotifications(4)
                do {
                    try await waitUntil(timeout: .seconds(90), "twelve pushes accepted") {
                        sim.lines.filter { $0["event"] as? String == "push" && $0["status"] as? Int == 201 }.count == 12
                    }
                } catch {
                    let status = try await native.store.status(id: ids[0])
                    Issue.record("webpush-sim: \(sim.process.log.suffix(3000))\nworker: \(workers[0].log.suffix(3000))\nstatus: \(String(describing: status))")
                    throw error
                }
                // Every push the service saw passed its checks (VAPID, TTL, Urgency, aes128gcm).
                let answered = sim.lines.filter { $0["event"] as? String == "push" }.compactMap { $0["status"] as? Int }
                #expect(answered.count == 12 && answered.allSatisfy { $0 == 201 }, "\(sim.process.log)")
                #expect(sim.lines.filter { $0["event"] as? String == "push" }.allSatisfy { $0["sub"] as? String == "mailto:ops@example.com" })
                for id in ids {
                    try await waitUntil(timeout: .seconds(60), "notification \(id) recorded as sent to three browsers") {
                        try await native.store.status(id: id)?.counts["sent"] == 3
                    }
                }
            }
        }
    }
}
