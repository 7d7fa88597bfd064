import Crypto
import Foundation
import NIOSSL
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushApps
import RichPushCore
import RichPushHTTP2
import RichPushSimTLS
import RichPushWorker
import Synchronization
import Testing

/// A running worker sends as its app's stored credentials and follows their changes without a
/// restart: an operator replaces the APNs key and bundle id, and the next pushes go with them.
@Suite("App credentials while the workers run", .serialized)
struct AppCredentialReloadTests {
    /// The topics of the pushes apns-sim accepted (it verified each one's provider token against
    /// the key its `kid` names; it does not pass the token on).
    final class Accepted: Sendable {
        private let topics = Mutex<[String]>([])
        func append(_ push: APNSSimulatorServer.AcceptedPush) { topics.withLock { $0.append(push.headers["apns-topic"] ?? "?") } }
        var all: [String] { topics.withLock { $0 } }
    }

    @Test func aReplacedAPNsKeyIsUsedWithinSecondsAndTheOldOneNoMore() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let old = P256.Signing.PrivateKey(), new = P256.Signing.PrivateKey()
                let accepted = Accepted()
                let certificates = try LocalCertificates.generate()
                let rules = APNSServerRules(token: APNSProviderTokenCheck(teamID: "DEF123GHIJ", keys: ["OLDKEY1234": old.publicKey, "NEWKEY1234": new.publicKey]),
                                            topics: ["com.example.old", "com.example.new"])
                let sim = try await APNSSimulatorServer.start(certificates: certificates, rules: rules, forward: { accepted.append($0) })
                let client = try HTTP2Client(configuration: HTTP2Client.Configuration(
                    endpoint: HTTP2Client.Endpoint(host: "localhost", port: sim.port, usesTLS: true),
                    trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)), responseIDHeader: "apns-id"))
                // The worker's flags: the old key and bundle id.
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: client, topic: "com.example.old", signer: try APNSSigningKey(pem: old.pemRepresentation, keyID: "OLDKEY1234", teamID: "DEF123GHIJ"))
                let store = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                let loaded = try #require(try await store.credentials(id: .default))
                let apps = WorkerAppCredentials(store: store, checkEvery: .seconds(5), loaded: loaded)
                let token = String(repeating: "ab", count: 32)
                let registered = try await pipeline.call("PUT", "/api/register/iphone-1", json: ["Platform": "apns", "Handle": token, "Tags": []])
                #expect(registered.status == 200)
                do {
                    try await withServices(pipeline.process(adapter: .apns(settings), apps: apps).services) {
                        func sendOne() async throws -> String {
                            let before = accepted.all.count
                            _ = try await pipeline.send(json: ["message": "m", "richType": "text", "payload": "p"])
                            try await waitUntil(timeout: .seconds(60), "apns-sim to accept the push") { accepted.all.count > before }
                            return accepted.all[before]
                        }
                        // No stored credentials yet: the flags'.
                        #expect(try await sendOne() == "com.example.old")
                        // The fleet's provider tokens are kept per team and key id: which key signed.
                        let tokenKey = { (keyID: String) in "\(pipeline.prefix):apns:token:DEF123GHIJ:\(keyID)" }
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("OLDKEY1234")).int == 1)
                        // The operator replaces them while the worker runs.
                        let changed = ContinuousClock.now
                        _ = try await store.update(id: .default, change: AppChange(set: AppCredentials(apns: try APNSCredential(
                            keyPEM: new.pemRepresentation, keyID: "NEWKEY1234", teamID: "DEF123GHIJ", bundleID: "com.example.new"))))
                        var latest = try await sendOne()
                        while latest != "com.example.new", ContinuousClock.now - changed < .seconds(60) {
                            latest = try await sendOne()
                        }
                        let took = ContinuousClock.now - changed
                        #expect(latest == "com.example.new", "\(accepted.all)")
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("NEWKEY1234")).int == 1)
                        // The announcement reaches the worker at once; the 5 s check is the fallback. Loose
                        // here (a busy machine), the figure is in the note.
                        #expect(took < .seconds(30), "the new credentials took \(took)")
                        // From then on only the new ones.
                        try await pipeline.redis.send("DEL", tokenKey("OLDKEY1234"))
                        for _ in 0..<3 { #expect(try await sendOne() == "com.example.new") }
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("OLDKEY1234")).int == 0, "the old key signed again")
                    }
                } catch {
                    client.shutdown()
                    try await sim.stop()
                    throw error
                }
                client.shutdown()
                try await sim.stop()
            }
        }
    }
}
