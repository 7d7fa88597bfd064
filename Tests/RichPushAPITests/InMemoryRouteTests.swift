import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdBcrypt
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushInMemory
import Testing

/// The seed's flows over real HTTP on loopback, through the composition root `richpush api`
/// runs, on the in-memory stores: no redis-server, so they run in a blink. `SeedFlowTests` and
/// the other suites run the same routes on Redis.
@Suite("In-memory routes")
struct InMemoryRouteTests {
    @Test func registerSendFetchReceiptsAndStatus() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        try await TestAPI(dependencies: api.dependencies).test { client in
            // A user added while the API runs signs in at once.
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("carol")) {
                #expect($0.status == .unauthorized)
            }
            try await TestAPI.addUsers([("carol", .user)], to: api.users)
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("carol")) { #expect($0.status == .ok) }

            let alicePhone = try await client.register("alice", handle: "token-a", tags: ["sports"])
            let bobPhone = try await client.register("bob", handle: "token-b", tags: ["sports"])
            // The seed's rule: a second POST for the same handle returns the same registration.
            let again = try await client.execute(uri: "/api/register?handle=token-a", method: .post, headers: TestAPI.basic("alice")) {
                try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
            }
            #expect(again == alicePhone)

            // The seed's flow: alice sends to herself and fetches it with her password.
            let accepted = try await client.sendImage("alice", message: "Check this image out!")
            #expect(accepted.status == .accepted, "\(String(buffer: accepted.body))")
            let own = try #require(accepted.json["id"] as? String)
            #expect(accepted.json["status"] as? String == "/api/notifications/\(own)/status")
            try await client.execute(uri: "/api/notifications/\(own)", method: .get, headers: TestAPI.basic("alice")) { response in
                #expect(response.status == .ok)
                #expect(response.bytes == TestAPI.png)
                #expect(response.headers[.contentType] == "image/png")
            }
            try await client.execute(uri: "/api/notifications/\(own)/status", method: .get, headers: TestAPI.basic("alice")) { response in
                #expect(response.json["state"] as? String == "fetched")
                #expect((response.json["counts"] as? [String: Int])?["fetched"] == 1)
            }

            // An admin sends to a tag.
            let tagged = try await client.sendImage("root", message: "Match day", target: "sports")
            #expect(tagged.status == .accepted, "\(String(buffer: tagged.body))")
            let id = try #require(tagged.json["id"] as? String)
            let number = try #require(Int(id))
            let record = try #require(try await api.notifications.notification(id: number))
            #expect(record.creator == "root" && record.target == "sports" && record.message == "Match day")
            // Bob's device carries the tag, but no push was sent to it yet: not his to read.
            try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: TestAPI.basic("bob")) { response in
                #expect(response.status == .notFound)
                #expect(response.errorMessage == "no notification \(id)")
            }
            // What a worker does: lease bob's push, send it, record the platform's answer.
            let key = DeliveryKey(notification: number, installation: bobPhone)
            #expect(try await api.notifications.leaseDeliveries([key], owner: "worker-1", duration: .seconds(60)) == [.leased])
            try await api.notifications.recordDeliveries([
                number: [DeliveryResult(installation: bobPhone, counter: .sent, adapterID: "apns-1")]
            ])

            try await client.execute(uri: "/api/notifications/\(id)?installation=\(bobPhone)", method: .get, headers: TestAPI.basic("bob"))
            { response in
                #expect(response.status == .ok)
                #expect(response.bytes == TestAPI.png)
            }
            for kind in ["displayed", "opened"] {
                try await client.execute(
                    uri: "/api/notifications/\(id)/receipts", method: .post, headers: TestAPI.basic("bob"),
                    body: TestAPI.json(["kind": kind, "installation": bobPhone])
                ) { #expect($0.status == .ok) }
            }
            // Carol's device never had it: her receipt is 404, and counts nothing.
            let carolPhone = try await client.register("carol", handle: "token-c", tags: ["sports"])
            try await client.execute(
                uri: "/api/notifications/\(id)/receipts", method: .post, headers: TestAPI.basic("carol"),
                body: TestAPI.json(["kind": "opened", "installation": carolPhone])
            ) { #expect($0.status == .notFound) }

            try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: TestAPI.basic("root")) { response in
                #expect(response.status == .ok)
                #expect(response.json["state"] as? String == "opened")
                let counts = response.json["counts"] as? [String: Int] ?? [:]
                #expect(counts["sent"] == 1 && counts["fetched"] == 1 && counts["displayed"] == 1 && counts["opened"] == 1, "\(counts)")
                let devices = response.json["devices"] as? [[String: Any]] ?? []
                #expect(devices.map { $0["installation"] as? String } == [bobPhone])
            }
        }
    }

    @Test func anotherUsersNotificationIs404AndErrorsAreJSON() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        try await TestAPI(dependencies: api.dependencies).test { client in
            let id = try #require(try await client.sendImage("alice").json["id"] as? String)
            // Someone else's id and a missing one read the same.
            for path in ["/api/notifications/\(id)", "/api/notifications/\(id)/status", "/api/notifications/\(Int(id)! + 1000)"] {
                try await client.execute(uri: path, method: .get, headers: TestAPI.basic("bob")) { response in
                    #expect(response.status == .notFound, "\(path)")
                    #expect(response.errorCode == "not_found", "\(path): \(String(buffer: response.body))")
                }
            }
            // The admin reads everyone's.
            try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: TestAPI.basic("root")) {
                #expect($0.status == .ok)
            }

            for headers in [[:], TestAPI.basic("alice", "wrong-pw"), TestAPI.basic("nobody")] as [HTTPFields] {
                try await client.execute(uri: "/api/notifications", method: .get, headers: headers) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    #expect(response.errorCode != nil && !response.errorMessage.isEmpty, "\(String(buffer: response.body))")
                }
            }
            let bad = try await client.sendImage("root", target: "sports &&")
            #expect(bad.status == .unprocessableContent && bad.errorCode == "bad_target", "\(String(buffer: bad.body))")
            #expect(bad.headers[.contentType]?.hasPrefix("application/json") == true && !bad.errorMessage.isEmpty)
            try await client.execute(
                uri: "/api/register/nope", method: .put, headers: TestAPI.basic("alice"),
                body: TestAPI.json(["Platform": "symbian", "Handle": "x"])
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "unknown_platform")
            }
        }
    }

    @Test func wrongPasswordsAreThrottledPerUserAndAddress() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        // A first delay of 30 s: a slow, busy machine cannot outlast it between two requests.
        let configuration = TestAPI.configuration {
            $0.auth.throttle.freeFailuresPerPair = 3
            $0.auth.throttle.firstDelay = .seconds(30)
        }
        try await TestAPI(configuration: configuration, dependencies: api.dependencies).test { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("bob", "guess")) {
                    #expect($0.status == .unauthorized)
                }
            }
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("bob")) { response in
                #expect(response.status == .tooManyRequests)
                #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 > 0)
            }
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("alice")) { #expect($0.status == .ok) }
        }
        // `richpush users unlock`: the pair may try again.
        #expect(try await api.users.unlock(user: "bob", address: nil) == 1)
        #expect(try await api.users.reserveLoginAttempt(user: "bob", address: "127.0.0.1", policy: configuration.auth.throttle) == nil)
    }

    @Test func apiKeysActAsTheirUserUntilRevoked() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        #expect(try await api.apiKeys.create(user: "ghost", scopes: [.send], label: "") == nil)
        let (sender, token) = try #require(try await api.apiKeys.create(user: "alice", scopes: [.send], label: "backend"))
        let bearer: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
        // Keys are remembered for an hour: only the announcement of the revocation ends this one early.
        let configuration = TestAPI.configuration { $0.auth.cacheTTL = .seconds(3600) }
        try await TestAPI(configuration: configuration, dependencies: api.dependencies).test { client in
            try await client.execute(
                uri: "/api/notifications", method: .post, headers: bearer,
                body: TestAPI.json(["message": "from a key", "richType": "text", "payload": "hello"])
            ) { response in
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
            }
            // A send key does not read.
            try await client.execute(uri: "/api/notifications", method: .get, headers: bearer) { #expect($0.status == .forbidden) }
            #expect(try await api.notifications.notifications(createdBy: "alice", before: nil, limit: 10).map(\.message) == ["from a key"])
            try await waitUntil(timeout: .seconds(60), "the API to listen for credential changes") { api.changes.listening == 1 }
            #expect(try await api.apiKeys.revoke(id: sender.id))
            // The announcement reaches the listener's task on its own schedule: refused well
            // before the hour the key would otherwise be remembered.
            try await waitUntil(timeout: .seconds(30), "the revoked key to be refused") {
                try await client.execute(
                    uri: "/api/notifications", method: .post, headers: bearer,
                    body: TestAPI.json(["message": "again", "richType": "text", "payload": "hello"])
                ) { $0.status == .unauthorized }
            }
        }
    }

    @Test func aChangedPasswordIsRefusedAtOnce() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        let configuration = TestAPI.configuration { $0.auth.cacheTTL = .seconds(3600) }
        try await TestAPI(configuration: configuration, dependencies: api.dependencies).test { client in
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("alice")) { #expect($0.status == .ok) }
            try await waitUntil(timeout: .seconds(60), "the API to listen for credential changes") { api.changes.listening == 1 }
            // `richpush users passwd alice`.
            #expect(try await api.users.update(name: "alice", passwordHash: Bcrypt.hash("new-pw", cost: 4), role: nil))
            // As above: refused well before the hour the old password would be remembered.
            try await waitUntil(timeout: .seconds(30), "the old password to be refused") {
                try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("alice")) {
                    $0.status == .unauthorized
                }
            }
            try await client.execute(uri: "/api/notifications", method: .get, headers: TestAPI.basic("alice", "new-pw")) {
                #expect($0.status == .ok)
            }
        }
    }

    @Test func webhooksAreTheirOwnersToSeeAndDelete() async throws {
        let api = InMemoryAPI()
        try await TestAPI.addUsers(to: api.users)
        try await TestAPI(dependencies: api.dependencies).test { client in
            let created = try await client.execute(
                uri: "/api/webhooks", method: .post, headers: TestAPI.basic("alice"),
                body: TestAPI.json(["url": "https://hooks.example.com/richpush", "events": ["sent", "opened"]]))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let id = try #require(created.json["id"] as? String)
            #expect((created.json["secret"] as? String)?.isEmpty == false)
            try await client.execute(uri: "/api/webhooks", method: .get, headers: TestAPI.basic("alice")) { response in
                #expect((response.json["webhooks"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
            }
            try await client.execute(uri: "/api/webhooks/\(id)", method: .get, headers: TestAPI.basic("bob")) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/webhooks/\(id)", method: .delete, headers: TestAPI.basic("bob")) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/webhooks/\(id)/attempts", method: .get, headers: TestAPI.basic("alice")) { response in
                #expect(response.status == .ok)
                #expect((response.json["attempts"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/api/webhooks/\(id)", method: .delete, headers: TestAPI.basic("alice")) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/webhooks/\(id)", method: .get, headers: TestAPI.basic("alice")) {
                #expect($0.status == .notFound)
            }
            for index in 0..<Webhook.maxPerUser {
                let response = try await client.execute(
                    uri: "/api/webhooks", method: .post, headers: TestAPI.basic("bob"),
                    body: TestAPI.json(["url": "https://hooks.example.com/\(index)", "events": ["sent"]]))
                #expect(response.status == .created)
            }
            try await client.execute(
                uri: "/api/webhooks", method: .post, headers: TestAPI.basic("bob"),
                body: TestAPI.json(["url": "https://hooks.example.com/one-more", "events": ["sent"]])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "webhook_limit")
            }
        }
    }
}
