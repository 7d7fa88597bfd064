import APITestSupport
import AsyncHTTPClient
import Foundation
import Hiredis
import HummingbirdBcrypt
import RedisTestSupport
import RichPushApps
import RichPushCore
import RichPushSimulator
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two apps on one deployment, each with its own `alice`: a request names its app with the
/// Basic user name `alice@shop` or an API key made in the app, and nothing of one app is read,
/// changed, listed or counted through the other; one worker fleet delivers both apps' pushes.
@Suite("Apps: isolation on one deployment", .serialized)
struct AppIsolationTests {
    /// Calls the API with a Bearer token.
    static func call(
        _ pipeline: Pipeline, _ method: String, _ path: String, bearer: String
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: pipeline.baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// The status of a GET with Basic credentials (AsyncHTTPClient: URLSession on Linux waits on
    /// a 401's Basic challenge for a credential delegate).
    static func status(_ pipeline: Pipeline, _ path: String, user: String, password: String) async throws -> Int {
        var request = HTTPClientRequest(url: pipeline.baseURL.appendingPathComponent(path).absoluteString)
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(30))
        return Int(response.status.code)
    }

    /// The app `shop` and its `users`, each with the password `<name>@shop-pw` (what the helpers
    /// send for the user name `<name>@shop`).
    static func createShop(_ pipeline: Pipeline, users: [(String, User.Role)]) async throws -> (AppID, RedisUserStore) {
        let shop = AppID(unchecked: "shop")
        let apps = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
        _ = try await apps.create(id: shop, name: "Shop", credentials: AppCredentials())
        let shopUsers = RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(shop))
        for (name, role) in users {
            #expect(try await shopUsers.create(User(name: name, role: role), passwordHash: Bcrypt.hash("\(name)@shop-pw", cost: 4)))
        }
        return (shop, shopUsers)
    }

    static func ids(_ answer: (status: Int, json: [String: Any])) -> Set<String> {
        Set((answer.json["notifications"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
    }

    /// A push handle registered in two apps is two devices on the hub, as a token belongs to one
    /// app with Apple and Google: each app's pushes, text included, reach only its own app's
    /// device channel.
    @Test func aHandleInTwoAppsIsTwoDevicesOnTheHub() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                _ = try await Self.createShop(pipeline, users: [("alice", .user)])
                var inShop = SimulatorConfiguration(
                    apiBaseURL: pipeline.baseURL, user: "alice@shop", password: "alice@shop-pw", tap: .none, fireDelay: .zero,
                    redis: pipeline.node, hubPrefix: pipeline.prefix, handlePrefix: "\(pipeline.prefix)-shared")
                inShop.fetch = false
                var inDefault = inShop
                inDefault.user = "alice"
                inDefault.password = "alice-pw"
                #expect(inShop.handle(of: 0) == inDefault.handle(of: 0))
                #expect(inShop.hubAddress(of: 0) != inDefault.hubAddress(of: 0))
                try await withServices(pipeline.process().services) {
                    try await withSimulator(try DeviceSimulator(configuration: inDefault)) { defaultLog in
                        try await withSimulator(try DeviceSimulator(configuration: inShop)) { shopLog in
                            let first = try await pipeline.send(json: [
                                "message": "for the default app", "richType": "text", "payload": "d",
                            ])
                            let second = try await pipeline.send(
                                as: "alice@shop", json: ["message": "for the shop", "richType": "text", "payload": "s"])
                            try await waitUntil(timeout: .seconds(60), "each app's push received") {
                                defaultLog.count("received") >= 1 && shopLog.count("received") >= 1
                            }
                            try await Task.sleep(for: .milliseconds(300))
                            #expect(defaultLog.all.filter { $0.event == "received" }.map(\.richId) == [String(first)])
                            #expect(shopLog.all.filter { $0.event == "received" }.map(\.richId) == [String(second)])
                        }
                    }
                }
            }
        }
    }

    @Test func twoAppsEachWithTheirOwnAliceShareNothing() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                // The shop's alice and root, with passwords of their own (the helper signs in as `<name>-pw`).
                let (shop, shopUsers) = try await Self.createShop(pipeline, users: [("alice", .user), ("root", .admin)])
                let shopKeys = pipeline.keys.forApp(shop)

                // The same installation id and tag in both apps: two installations.
                for user in ["alice", "alice@shop"] {
                    let registered = try await pipeline.call(
                        "PUT", "/api/register/iphone-1", as: user,
                        json: ["Platform": "apns", "Handle": "\(user)-token", "Tags": ["sports"]])
                    #expect(registered.status == 200, "\(user): \(registered.json)")
                }
                // Each in its app's keys: the default app's as before apps, the shop's under `app:shop`.
                #expect(try await pipeline.redis.send("EXISTS", "\(pipeline.prefix):app:shop:inst:iphone-1").int == 1)
                #expect(try await pipeline.redis.send("HGET", "\(pipeline.prefix):inst:iphone-1", "handle").string == "alice-token")

                try await withServices(pipeline.process().services) {
                    let inDefault = try await pipeline.send(
                        as: "root", json: ["message": "default news", "richType": "text", "payload": "d", "target": "sports"])
                    let inShop = try await pipeline.send(
                        as: "root@shop", json: ["message": "shop news", "richType": "text", "payload": "s", "target": "sports"])
                    // Each reached its own app's device, and only that one.
                    for (id, user) in [(inDefault, "root"), (inShop, "root@shop")] {
                        // No device listens: the hub holds each push for its device.
                        try await waitUntil(timeout: .seconds(60), "notification \(id) to reach the hub") {
                            (try await pipeline.status(id, as: user)["counts"] as? [String: Int])?["held"] == 1
                        }
                        let status = try await pipeline.status(id, as: user)
                        let devices = status["devices"] as? [[String: Any]] ?? []
                        #expect(devices.count == 1 && devices.first?["installation"] as? String == "iphone-1", "\(status)")
                    }
                    // Nothing of one app is read through the other: the record, its status, its payload.
                    for (id, stranger) in [(inDefault, "root@shop"), (inShop, "root")] {
                        #expect(try await pipeline.call("GET", "/api/notifications/\(id)/status", as: stranger).status == 404)
                        #expect(try await pipeline.call("GET", "/api/notifications/\(id)", as: stranger).status == 404)
                        #expect(try await pipeline.call("DELETE", "/api/notifications/\(id)", as: stranger).status == 404)
                    }
                    // Nor listed.
                    #expect(Self.ids(try await pipeline.call("GET", "/api/notifications", as: "root@shop")) == [String(inShop)])
                    #expect(Self.ids(try await pipeline.call("GET", "/api/notifications", as: "root")) == [String(inDefault)])

                    // An API key acts in the app it was made in, and its token says which.
                    let made = try #require(
                        try await RedisAPIKeyStore(redis: pipeline.redis, keys: shopKeys).create(
                            user: "root", scopes: [.admin], label: "ci"))
                    #expect(made.token.hasPrefix("rpk_shop.\(made.key.id)_"))
                    #expect(Self.ids(try await Self.call(pipeline, "GET", "/api/notifications", bearer: made.token)) == [String(inShop)])
                    // The same secret presented as the default app's key is nobody's.
                    let moved = "rpk_" + made.token.dropFirst("rpk_shop.".count)
                    #expect(try await Self.call(pipeline, "GET", "/api/notifications", bearer: moved).status == 401)
                }

                // Each app's password is its own; an app that does not exist signs no one in.
                #expect(try await Self.status(pipeline, "api/notifications", user: "alice@shop", password: "alice@shop-pw") == 200)
                #expect(try await Self.status(pipeline, "api/notifications", user: "alice@nope", password: "alice@nope-pw") == 401)
                #expect(try await Self.status(pipeline, "api/notifications", user: "alice@shop", password: "alice-pw") == 401)
                // The shop has no webhooks; the default app's are not listed there.
                let hooks = try await pipeline.call("GET", "/api/webhooks", as: "root@shop")
                #expect(hooks.status == 200 && (hooks.json["webhooks"] as? [Any])?.isEmpty == true, "\(hooks.json)")
                // The shop's alice deletes her device; the default app's stays.
                #expect(try await pipeline.call("DELETE", "/api/register/iphone-1", as: "alice@shop").status == 200)
                #expect(try await pipeline.redis.send("EXISTS", "\(pipeline.prefix):inst:iphone-1").int == 1)
                #expect(try await pipeline.redis.send("EXISTS", "\(pipeline.prefix):app:shop:inst:iphone-1").int == 0)

                // An app with users is not removed (they would be left unreachable), and no app
                // is created whose id a default user's name ends with (`bob@news` would sign in to it).
                #expect(try await AppGuards.removalProblem(shop, users: shopUsers) != nil)
                let defaultUsers = RedisUserStore(redis: pipeline.redis, keys: pipeline.keys)
                _ = try await defaultUsers.create(User(name: "bob@news", role: .user), passwordHash: Bcrypt.hash("x", cost: 4))
                #expect(try await AppGuards.creationProblem(try #require(AppID(validating: "news")), defaultUsers: defaultUsers) != nil)
                #expect(try await AppGuards.creationProblem(try #require(AppID(validating: "blog")), defaultUsers: defaultUsers) == nil)
                // bob@news is the default app's bob@news while no app `news` exists.
                #expect(try await Self.status(pipeline, "api/notifications", user: "bob@news", password: "x") == 200)
            }
        }
    }

    /// An app's limits hold for all its users together: the audience one notification may
    /// address (422), the notifications a minute (429 with Retry-After), each naming the limit;
    /// the default app, without limits, is not held by them.
    @Test func anAppsLimitsHoldForAllItsUsersTogether() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let news = AppID(unchecked: "news")
                let apps = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                let created = try await apps.create(
                    id: news, change: AppChange(name: "News", limits: AppLimits(notificationsPerMinute: 2, audience: 1)))
                #expect(created.limits == AppLimits(notificationsPerMinute: 2, audience: 1))
                let users = RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(news))
                for name in ["root", "ann"] {
                    #expect(try await users.create(User(name: name, role: .admin), passwordHash: Bcrypt.hash("\(name)@news-pw", cost: 4)))
                }
                for (index, tag) in ["everyone", "everyone"].enumerated() {
                    let registered = try await pipeline.call(
                        "PUT", "/api/register/phone-\(index)", as: "root@news",
                        json: ["Platform": "apns", "Handle": "token-\(index)", "Tags": [tag, "solo-\(index)"]])
                    #expect(registered.status == 200, "\(registered.json)")
                }
                // Two devices where the app allows one per notification.
                let wide = try await pipeline.call(
                    "POST", "/api/notifications", as: "root@news",
                    json: ["message": "m", "richType": "text", "payload": "p", "target": "everyone"])
                #expect(
                    wide.status == 422 && (wide.json["error"] as? [String: Any])?["code"] as? String == "app_limit_audience", "\(wide.json)"
                )
                // Two a minute, whichever user sends.
                for user in ["root@news", "ann@news"] {
                    let sent = try await pipeline.call(
                        "POST", "/api/notifications", as: user,
                        json: ["message": "m", "richType": "text", "payload": "p", "target": "solo-0"])
                    #expect(sent.status == 202, "\(sent.json)")
                }
                var request = HTTPClientRequest(url: pipeline.baseURL.appendingPathComponent("api/notifications").absoluteString)
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Basic " + Data("root@news:root@news-pw".utf8).base64EncodedString())
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(Data(#"{"message": "m", "richType": "text", "payload": "p", "target": "solo-1"}"#.utf8))
                let third = try await TestHTTP.client.execute(request, timeout: .seconds(30))
                let body = try await third.body.collect(upTo: 1 << 16)
                #expect(third.status.code == 429 && Int(third.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
                #expect(
                    String(buffer: body).contains("app_limit_rate") && String(buffer: body).contains("limits.notificationsPerMinute"),
                    "\(String(buffer: body))")
                // The default app's users are not held by another app's limits.
                for _ in 0..<3 {
                    #expect(
                        try await pipeline.call(
                            "POST", "/api/notifications", as: "root",
                            json: ["message": "m", "richType": "text", "payload": "p", "target": "x"]
                        ).status == 202)
                }
            }
        }
    }

    /// Each app's webhooks get its own events only: the default app's and the shop's webhooks,
    /// both for all their users, each receive the cancellation of their own app's notification.
    @Test func webhooksGetTheirOwnAppsEventsOnly() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let shop = AppID(unchecked: "shop")
                let apps = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: KeyRing(current: .generate()))
                _ = try await apps.create(id: shop, name: "Shop", credentials: AppCredentials())
                #expect(
                    try await RedisUserStore(redis: pipeline.redis, keys: pipeline.keys.forApp(shop))
                        .create(User(name: "root", role: .admin), passwordHash: Bcrypt.hash("root@shop-pw", cost: 4)))
                let receivers = [WebhookReceiver(secret: WebhookFlowTests.secret), WebhookReceiver(secret: WebhookFlowTests.secret)]
                let ports = Mutex<[Int]>([0, 0])
                try await receivers[0].serve(onPort: { port in ports.withLock { $0[0] = port } }) {
                    try await receivers[1].serve(onPort: { port in ports.withLock { $0[1] = port } }) {
                        try await waitUntil(timeout: .seconds(30), "both receivers to listen") { ports.withLock { !$0.contains(0) } }
                        let (defaultPort, shopPort) = ports.withLock { ($0[0], $0[1]) }
                        let defaultHook = try await WebhookFlowTests.createWebhook(
                            pipeline, port: defaultPort, events: ["cancelled"], as: "root", extra: ["allUsers": true])
                        let shopHook = try await WebhookFlowTests.createWebhook(
                            pipeline, port: shopPort, events: ["cancelled"], as: "root@shop", extra: ["allUsers": true])
                        try await WebhookFlowTests.withDispatcher(pipeline) {
                            let later = UTCTimestamp.iso8601(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000)
                            var ids: [String: Int] = [:]
                            for user in ["root", "root@shop"] {
                                let id = try await pipeline.send(
                                    as: user, json: ["message": "m", "richType": "text", "payload": "p", "sendAt": later])
                                #expect(try await pipeline.call("DELETE", "/api/notifications/\(id)", as: user).status == 200)
                                ids[user] = id
                            }
                            try await waitUntil(timeout: .seconds(60), "each app's webhook to get its cancellation") {
                                receivers.allSatisfy { !$0.uniqueEvents.isEmpty }
                            }
                            for (receiver, user) in zip(receivers, ["root", "root@shop"]) {
                                let events = Array(receiver.uniqueEvents.values)
                                #expect(
                                    events.count == 1 && events.first?["notificationId"] == ids[user].map(String.init)
                                        && events.first?["type"] == "cancelled",
                                    "\(user): \(events)")
                                #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
                            }
                            // Each app's attempts are its own. An attempt is recorded after the receiver
                            // answered, so it is waited for, not read once.
                            for (hook, user) in [(shopHook, "root@shop"), (defaultHook, "root")] {
                                try await waitUntil(timeout: .seconds(60), "\(user)'s webhook attempt recorded as delivered") {
                                    let attempts =
                                        try await pipeline.call("GET", "/api/webhooks/\(hook)/attempts", as: user).json["attempts"]
                                        as? [[String: Any]] ?? []
                                    return attempts.contains { $0["outcome"] as? String == "delivered" }
                                }
                            }
                            #expect(try await pipeline.call("GET", "/api/webhooks/\(shopHook)", as: "root").status == 404)
                            #expect(try await pipeline.call("GET", "/api/webhooks/\(defaultHook)", as: "root@shop").status == 404)
                        }
                    }
                }
            }
        }
    }
}
