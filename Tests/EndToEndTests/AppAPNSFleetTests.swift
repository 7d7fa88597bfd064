import Crypto
import Foundation
import HummingbirdBcrypt
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushApps
import RichPushCore
import RichPushHTTP2
import RichPushSimTLS
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// One worker sends for two apps, each as its own APNs key and bundle id: apns-sim accepts each
/// app's push with that app's topic, signed by that app's key; an app without APNs credentials
/// has its iOS devices refused with a reason naming it, never sent as another app's.
@Suite("Apps on APNs: one worker, each app its own key", .serialized)
struct AppAPNSFleetTests {
    @Test func eachAppsPushGoesAsItsOwnKeyAndTopic() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let flags = P256.Signing.PrivateKey(), shopKey = P256.Signing.PrivateKey(), newsKey = P256.Signing.PrivateKey()
                // Apple's rules: the team's keys, and the bundle ids its apps have.
                let rules = APNSServerRules(
                    token: APNSProviderTokenCheck(
                        teamID: "DEF123GHIJ",
                        keys: [
                            "FLAGKEY123": flags.publicKey, "SHOPKEY123": shopKey.publicKey, "NEWSKEY123": newsKey.publicKey,
                        ]), topics: ["com.example.default", "com.example.shop", "com.example.news"])
                let sim = try await LocalAPNS.start(rules: rules)
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: sim.client, topic: "com.example.default",
                    signer: try APNSSigningKey(pem: flags.pemRepresentation, keyID: "FLAGKEY123", teamID: "DEF123GHIJ"))
                let store = RedisAppStore(
                    redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                let shop = AppID(unchecked: "shop"), news = AppID(unchecked: "news"), bare = AppID(unchecked: "bare")
                _ = try await store.create(
                    id: shop, name: "Shop",
                    credentials: AppCredentials(
                        apns: try APNSCredential(
                            keyPEM: shopKey.pemRepresentation, keyID: "SHOPKEY123", teamID: "DEF123GHIJ", bundleID: "com.example.shop")))
                _ = try await store.create(
                    id: news, name: "News",
                    credentials: AppCredentials(
                        apns: try APNSCredential(
                            keyPEM: newsKey.pemRepresentation, keyID: "NEWSKEY123", teamID: "DEF123GHIJ", bundleID: "com.example.news")))
                _ = try await store.create(id: bare, name: "Bare", credentials: AppCredentials())
                let loaded = try #require(try await store.credentials(id: .default))
                for app in [shop, news, bare] {
                    #expect(
                        try await RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(app))
                            .create(User(name: "alice", role: .user), passwordHash: Bcrypt.hash("alice@\(app)-pw", cost: 4)))
                }
                // One device per app, its token telling whose.
                let tokens: [(user: String, token: String)] = [
                    ("alice", String(repeating: "0a", count: 32)), ("alice@shop", String(repeating: "5b", count: 32)),
                    ("alice@news", String(repeating: "6c", count: 32)), ("alice@bare", String(repeating: "7d", count: 32)),
                ]
                for (user, token) in tokens {
                    let registered = try await pipeline.call(
                        "PUT", "/api/register/iphone", as: user, json: ["Platform": "apns", "Handle": token, "Tags": []])
                    #expect(registered.status == 200, "\(user): \(registered.json)")
                }
                do {
                    try await withServices(
                        pipeline.process(adapter: .apns(settings), apps: WorkerAppCredentials(store: store, loaded: loaded)).services
                    ) {
                        var sent: [(user: String, id: Int)] = []
                        for (user, _) in tokens {
                            sent.append(
                                (user, try await pipeline.send(as: user, json: ["message": "m", "richType": "text", "payload": "p"])))
                        }
                        try await waitUntil(timeout: .seconds(60), "apns-sim to accept the three apps' pushes") { sim.accepted.count >= 3 }
                        let topics = Dictionary(
                            sim.accepted.map { ($0.deviceToken, $0.headers["apns-topic"] ?? "?") }, uniquingKeysWith: { first, _ in first })
                        #expect(
                            topics == [
                                tokens[0].token: "com.example.default", tokens[1].token: "com.example.shop",
                                tokens[2].token: "com.example.news",
                            ],
                            "\(topics)")
                        // Each signed by its app's key: the fleet's provider token per team and key.
                        for keyID in ["FLAGKEY123", "SHOPKEY123", "NEWSKEY123"] {
                            #expect(
                                try await pipeline.redis.send("EXISTS", "\(pipeline.prefix):apns:token:DEF123GHIJ:\(keyID)").int == 1,
                                "\(keyID)")
                        }
                        // The app without APNs credentials: refused, with the reason, not sent as another's.
                        let bareID = try #require(sent.last?.id)
                        try await waitUntil(timeout: .seconds(60), "the bare app's push to fail") {
                            (try await pipeline.status(bareID, as: "alice@bare")["counts"] as? [String: Int])?["failed"] == 1
                        }
                        let status = try await pipeline.status(bareID, as: "alice@bare")
                        let error = (status["devices"] as? [[String: Any]])?.first?["error"] as? String ?? ""
                        #expect(error.contains("app 'bare' has no APNs credentials"), "\(status)")
                        #expect(!sim.accepted.contains { $0.deviceToken == tokens[3].token })
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
