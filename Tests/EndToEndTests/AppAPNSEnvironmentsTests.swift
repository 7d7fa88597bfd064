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

/// Two apps of two Apple teams, with their own keys and bundle ids, served by one fleet of two
/// workers against two apns-sims, one standing in for Apple's production service and one for its
/// sandbox, each serving every team and refusing the other environment's device tokens: each
/// app's production device reaches production and its sandbox device the sandbox, with its app's
/// topic, signed by its app's key.
@Suite("Apps on APNs: two teams, both Apple environments, two workers", .serialized)
struct AppAPNSEnvironmentsTests {
    /// The topic of each device token's first push `sim` accepted.
    static func topics(_ sim: LocalAPNS) -> [String: String] {
        Dictionary(sim.accepted.map { ($0.deviceToken, $0.headers["apns-topic"] ?? "?") }, uniquingKeysWith: { first, _ in first })
    }

    @Test func eachAppsDevicesReachTheirEnvironmentAsTheirApp() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let flags = P256.Signing.PrivateKey(), shopKey = P256.Signing.PrivateKey(), newsKey = P256.Signing.PrivateKey()
                let shopProduction = String(repeating: "1a", count: 32), shopSandbox = String(repeating: "2b", count: 32)
                let newsProduction = String(repeating: "3c", count: 32), newsSandbox = String(repeating: "4d", count: 32)
                // One service for every team, as Apple's: the flags' team and the two apps' teams.
                let teams = [
                    "FLAGTEAM01": ["FLAGKEY123": flags.publicKey], "SHOPTEAM01": ["SHOPKEY123": shopKey.publicKey],
                    "NEWSTEAM01": ["NEWSKEY123": newsKey.publicKey],
                ]
                let topics: Set<String> = ["com.example.default", "com.example.shop", "com.example.news"]
                let production = try await LocalAPNS.start(
                    rules: APNSServerRules(
                        token: APNSProviderTokenCheck(teams: teams), topics: topics,
                        otherEnvironmentTokens: [shopSandbox, newsSandbox]))
                let sandbox = try await LocalAPNS.start(
                    rules: APNSServerRules(
                        token: APNSProviderTokenCheck(teams: teams), topics: topics,
                        otherEnvironmentTokens: [shopProduction, newsProduction]))
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: production.client, sandboxClient: sandbox.client, topic: "com.example.default",
                    signer: try APNSSigningKey(pem: flags.pemRepresentation, keyID: "FLAGKEY123", teamID: "FLAGTEAM01"))
                let store = RedisAppStore(
                    redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                for (id, key, kid, team) in [("shop", shopKey, "SHOPKEY123", "SHOPTEAM01"), ("news", newsKey, "NEWSKEY123", "NEWSTEAM01")] {
                    let app = AppID(unchecked: id)
                    _ = try await store.create(
                        id: app, name: id,
                        credentials: AppCredentials(
                            apns: try APNSCredential(
                                keyPEM: key.pemRepresentation, keyID: kid, teamID: team, bundleID: "com.example.\(id)")))
                    #expect(
                        try await RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(app))
                            .create(User(name: "alice", role: .user), passwordHash: Bcrypt.hash("alice@\(id)-pw", cost: 4)))
                }
                for (user, device, token, environment) in [
                    ("alice@shop", "iphone", shopProduction, "production"), ("alice@shop", "xcode", shopSandbox, "sandbox"),
                    ("alice@news", "iphone", newsProduction, "production"), ("alice@news", "xcode", newsSandbox, "sandbox"),
                ] {
                    let registered = try await pipeline.call(
                        "PUT", "/api/register/\(device)", as: user,
                        json: ["Platform": "apns", "Handle": token, "Tags": [], "Environment": environment])
                    #expect(registered.status == 200, "\(user) \(device): \(registered.json)")
                }
                let loaded = try #require(try await store.credentials(id: .default))
                let workers = [
                    pipeline.process(consumer: "w1", adapter: .apns(settings), apps: WorkerAppCredentials(store: store, loaded: loaded)),
                    pipeline.process(consumer: "w2", adapter: .apns(settings), apps: WorkerAppCredentials(store: store, loaded: loaded)),
                ]
                do {
                    try await withServices(workers.flatMap(\.services)) {
                        for user in ["alice@shop", "alice@news"] {
                            _ = try await pipeline.send(as: user, json: ["message": "m", "richType": "text", "payload": "p"])
                        }
                        try await waitUntil(timeout: .seconds(60), "both services to accept both apps' pushes") {
                            Self.topics(production).count >= 2 && Self.topics(sandbox).count >= 2
                        }
                        #expect(
                            Self.topics(production) == [shopProduction: "com.example.shop", newsProduction: "com.example.news"],
                            "\(Self.topics(production))")
                        #expect(
                            Self.topics(sandbox) == [shopSandbox: "com.example.shop", newsSandbox: "com.example.news"],
                            "\(Self.topics(sandbox))")
                        for (team, kid) in [("SHOPTEAM01", "SHOPKEY123"), ("NEWSTEAM01", "NEWSKEY123")] {
                            #expect(
                                try await pipeline.redis.send("EXISTS", "\(pipeline.prefix):apns:token:\(team):\(kid)").int == 1, "\(kid)")
                        }
                    }
                } catch {
                    try await production.stop()
                    try await sandbox.stop()
                    throw error
                }
                try await production.stop()
                try await sandbox.stop()
            }
        }
    }
}
