import HummingbirdBcrypt
import RedisTestSupport
import RichPushApps
import RichPushCore
import RichPushStorage
import Testing

/// Apps on Redis Cluster: another app's keys keep their hash tags (its registry its own, its
/// notifications their partition's), so its sends, deliveries and limits work as the default
/// app's do, and nothing crosses.
@Suite("Apps on Redis Cluster", .serialized, .timeLimit(.minutes(5)))
struct AppsOnClusterTests {
    @Test func anAppSendsAndIsLimitedOnACluster() async throws {
        try await withRedisCluster { cluster in
            try await Pipeline.start(cluster: cluster, partitions: 3) { pipeline in
                let shop = AppID(unchecked: "shop")
                let apps = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                _ = try await apps.create(id: shop, change: AppChange(name: "Shop", limits: AppLimits(notificationsPerMinute: 3)))
                let users = RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(shop))
                #expect(try await users.create(User(name: "root", role: .admin), passwordHash: Bcrypt.hash("root@shop-pw", cost: 4)))
                for user in ["root", "root@shop"] {
                    let registered = try await pipeline.call(
                        "PUT", "/api/register/tablet", as: user, json: ["Platform": "apns", "Handle": "\(user)-t", "Tags": ["all"]])
                    #expect(registered.status == 200, "\(user): \(registered.json)")
                }
                try await withServices(pipeline.process().services) {
                    var shopIDs: [Int] = []
                    for _ in 0..<3 {
                        shopIDs.append(
                            try await pipeline.send(
                                as: "root@shop", json: ["message": "m", "richType": "text", "payload": "p", "target": "all"]))
                    }
                    let over = try await pipeline.call(
                        "POST", "/api/notifications", as: "root@shop",
                        json: ["message": "m", "richType": "text", "payload": "p", "target": "all"])
                    #expect(
                        over.status == 429 && (over.json["error"] as? [String: Any])?["code"] as? String == "app_limit_rate", "\(over.json)"
                    )
                    let inDefault = try await pipeline.send(
                        as: "root", json: ["message": "m", "richType": "text", "payload": "p", "target": "all"])
                    for (id, user) in shopIDs.map({ ($0, "root@shop") }) + [(inDefault, "root")] {
                        try await waitUntil(timeout: .seconds(60), "notification \(id) to reach the hub") {
                            (try await pipeline.status(id, as: user)["counts"] as? [String: Int])?["held"] == 1
                        }
                    }
                    #expect(try await pipeline.call("GET", "/api/notifications/\(inDefault)/status", as: "root@shop").status == 404)
                    #expect(try await pipeline.call("GET", "/api/notifications/\(shopIDs[0])/status", as: "root").status == 404)
                }
            }
        }
    }
}
