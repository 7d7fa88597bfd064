import Crypto
import Foundation
import NIOSSL
import PlatformSimTestSupport
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
    @Test func aReplacedAPNsKeyIsUsedWithinSecondsAndTheOldOneNoMore() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let old = P256.Signing.PrivateKey(), new = P256.Signing.PrivateKey()
                let rules = APNSServerRules(
                    token: APNSProviderTokenCheck(teamID: "DEF123GHIJ", keys: ["OLDKEY1234": old.publicKey, "NEWKEY1234": new.publicKey]),
                    topics: ["com.example.old", "com.example.new"])
                let sim = try await LocalAPNS.start(rules: rules)
                // The worker's flags: the old key and bundle id.
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: sim.client, topic: "com.example.old",
                    signer: try APNSSigningKey(pem: old.pemRepresentation, keyID: "OLDKEY1234", teamID: "DEF123GHIJ"))
                let store = RedisAppStore(
                    redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                let loaded = try #require(try await store.credentials(id: .default))
                let apps = WorkerAppCredentials(store: store, checkEvery: .seconds(5), loaded: loaded)
                let token = String(repeating: "ab", count: 32)
                let registered = try await pipeline.call(
                    "PUT", "/api/register/iphone-1", json: ["Platform": "apns", "Handle": token, "Tags": []])
                #expect(registered.status == 200)
                do {
                    try await withServices(pipeline.process(adapter: .apns(settings), apps: apps).services) {
                        func sendOne() async throws -> String {
                            let before = sim.accepted.count
                            _ = try await pipeline.send(json: ["message": "m", "richType": "text", "payload": "p"])
                            try await waitUntil(timeout: .seconds(60), "apns-sim to accept the push") { sim.accepted.count > before }
                            // The topic of the push apns-sim accepted (it verified the provider token against the
                            // key its `kid` names; it does not pass the token on).
                            return sim.accepted[before].headers["apns-topic"] ?? "?"
                        }
                        // No stored credentials yet: the flags'.
                        #expect(try await sendOne() == "com.example.old")
                        // The fleet's provider tokens are kept per team and key id: which key signed.
                        let tokenKey = { (keyID: String) in "\(pipeline.prefix):apns:token:DEF123GHIJ:\(keyID)" }
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("OLDKEY1234")).int == 1)
                        // The operator replaces them while the worker runs.
                        let changed = ContinuousClock.now
                        _ = try await store.update(
                            id: .default,
                            change: AppChange(
                                set: AppCredentials(
                                    apns: try APNSCredential(
                                        keyPEM: new.pemRepresentation, keyID: "NEWKEY1234", teamID: "DEF123GHIJ",
                                        bundleID: "com.example.new"))))
                        var latest = try await sendOne()
                        while latest != "com.example.new", ContinuousClock.now - changed < .seconds(60) {
                            latest = try await sendOne()
                        }
                        let took = ContinuousClock.now - changed
                        #expect(latest == "com.example.new", "\(sim.accepted.map { $0.headers["apns-topic"] ?? "?" })")
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("NEWKEY1234")).int == 1)
                        // The announcement reaches the worker at once; the 5 s check is the fallback. Loose
                        // here (a busy machine), the figure is in the issue's note.
                        #expect(took < .seconds(30), "the new credentials took \(took)")
                        // From then on only the new ones.
                        try await pipeline.redis.send("DEL", tokenKey("OLDKEY1234"))
                        for _ in 0..<3 { #expect(try await sendOne() == "com.example.new") }
                        #expect(try await pipeline.redis.send("EXISTS", tokenKey("OLDKEY1234")).int == 0, "the old key signed again")
                    }
                } catch {
                    try await sim.stop()
                    throw error
                }
                try await sim.stop()
            }
        }
    }
}
