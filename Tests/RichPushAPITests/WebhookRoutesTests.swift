import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// `/api/webhooks`: what is refused and why, who sees what, and that events reach the outbox only
/// when a webhook wants them.
@Suite("Webhook routes")
struct WebhookRoutesTests {
    static func create(_ client: any TestClientProtocol, as user: String = "alice", _ object: [String: Any]) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/webhooks", method: .post, headers: APIFixture.basic(user) + [.contentType: "application/json"],
            body: APIFixture.json(object))
    }

    static var valid: [String: Any] { ["url": "https://hooks.example.com/richpush", "events": ["sent", "opened"]] }

    @Test func badInputIsRefusedByName() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let cases: [([String: Any], HTTPResponse.Status, String)] = [
                    (["events": ["sent"]], .badRequest, "missing_field"),
                    (["url": "ftp://example.com/x", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "https://user:pw@example.com/x", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "https://" + String(repeating: "a", count: 2100), "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "http://127.0.0.1:9000/hook", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "http://localhost/hook", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "http://[::1]/hook", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "http://10.1.2.3/hook", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "http://169.254.169.254/latest/meta-data", "events": ["sent"]], .badRequest, "bad_url"),
                    (["url": "https://example.com/x", "events": []], .badRequest, "bad_events"),
                    (["url": "https://example.com/x", "events": "sent"], .badRequest, "bad_events"),
                    (["url": "https://example.com/x", "events": ["sent", "delivered"]], .badRequest, "unknown_event"),
                    (["url": "https://example.com/x", "events": ["sent"], "secret": "short"], .badRequest, "bad_secret"),
                    (["url": "https://example.com/x", "events": ["sent"], "secret": "has a space in it!!"], .badRequest, "bad_secret"),
                    (["url": "https://example.com/x", "events": ["sent"], "allUsers": 1], .badRequest, "wrong_type"),
                    (["url": "https://example.com/x", "events": ["sent"], "allUsers": "true"], .badRequest, "wrong_type"),
                    (["url": "https://example.com/x", "events": ["sent"], "allUsers": NSNull()], .badRequest, "wrong_type"),
                    (["url": "https://example.com/x", "events": ["sent", 7]], .badRequest, "unknown_event"),
                    (["url": "https://example.com/x", "events": ["sent"], "secret": NSNull()], .badRequest, "bad_secret"),
                    (["url": 42, "events": ["sent"]], .badRequest, "missing_field"),
                    (
                        ["url": "https://example.com/x", "events": ["sent"], "description": String(repeating: "d", count: 201)],
                        .badRequest, "bad_description"
                    ),
                    (["url": "https://example.com/x", "events": ["sent"], "retries": 3], .badRequest, "unknown_field"),
                    (["url": "https://example.com/x", "events": ["sent"], "allUsers": true], .forbidden, "forbidden"),
                ]
                for (body, status, code) in cases {
                    let response = try await Self.create(client, body)
                    #expect(response.status == status && response.errorCode == code, "\(body): \(response.status) \(response.json)")
                }
                let malformed = try await client.execute(
                    uri: "/api/webhooks", method: .post, headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: ByteBuffer(string: "{\"url\": "))
                #expect(malformed.status == .badRequest && malformed.errorCode == "malformed_json")
                let huge = try await client.execute(
                    uri: "/api/webhooks", method: .post, headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: ByteBuffer(string: "{\"description\": \"" + String(repeating: "x", count: 20_000) + "\"}"))
                #expect(huge.status == .contentTooLarge)
                let none = try await client.execute(uri: "/api/webhooks", method: .get, headers: APIFixture.basic("alice")) {
                    $0.json["webhooks"] as? [Any]
                }
                #expect(none?.isEmpty == true)
            }
        }
    }

    @Test func ownersAndAdminsSeeTheirsTheSecretIsShownOnce() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let created = try await Self.create(client, Self.valid)
                #expect(created.status == .created)
                let id = try #require(created.json["id"] as? String)
                let secret = try #require(created.json["secret"] as? String)
                #expect(secret.hasPrefix("whsec_") && secret.count > 40 && created.json["secretGenerated"] as? Bool == true)
                #expect(created.headers[.location] == "/api/webhooks/\(id)" && created.json["events"] as? [String] == ["opened", "sent"])
                let shown = try await client.execute(uri: "/api/webhooks/\(id)", method: .get, headers: APIFixture.basic("alice"))
                #expect(
                    shown.status == .ok && shown.json["secret"] == nil
                        && shown.json["url"] as? String == "https://hooks.example.com/richpush")
                // Another user: not found, whether reading, deleting or listing attempts.
                for (method, path) in [
                    (HTTPRequest.Method.get, ""), (.delete, ""), (.get, "/attempts"), (.get, "/dead-letters"),
                    (.post, "/dead-letters/replay"),
                ] {
                    let response = try await client.execute(
                        uri: "/api/webhooks/\(id)\(path)", method: method, headers: APIFixture.basic("bob"))
                    #expect(response.status == .notFound, "\(method) \(path)")
                }
                let bobs = try await client.execute(uri: "/api/webhooks", method: .get, headers: APIFixture.basic("bob")) {
                    $0.json["webhooks"] as? [Any]
                }
                #expect(bobs?.isEmpty == true)
                // An admin sees everyone's, and may hear about all users.
                let everyone = try await Self.create(
                    client, as: "root", Self.valid.merging(["allUsers": true, "secret": "a-secret-of-my-own-1234"]) { _, new in new })
                #expect(
                    everyone.status == .created && everyone.json["allUsers"] as? Bool == true
                        && everyone.json["secret"] as? String == "a-secret-of-my-own-1234")
                let all = try await client.execute(uri: "/api/webhooks", method: .get, headers: APIFixture.basic("root")) {
                    $0.json["webhooks"] as? [[String: Any]]
                }
                #expect(all?.count == 2 && all?.allSatisfy { $0["secret"] == nil } == true)
                // At most 10 per user.
                for _ in 1..<Webhook.maxPerUser { #expect(try await Self.create(client, Self.valid).status == .created) }
                let over = try await Self.create(client, Self.valid)
                #expect(over.status == .unprocessableContent && over.errorCode == "webhook_limit")
                let deleted = try await client.execute(uri: "/api/webhooks/\(id)", method: .delete, headers: APIFixture.basic("alice"))
                #expect(deleted.status == .noContent)
                let gone = try await client.execute(uri: "/api/webhooks/\(id)", method: .get, headers: APIFixture.basic("alice"))
                #expect(gone.status == .notFound)
                #expect(try await Self.create(client, Self.valid).status == .created)
                let badLimit = try await client.execute(
                    uri: "/api/webhooks/\(everyone.json["id"] as? String ?? "")/attempts?limit=0", method: .get,
                    headers: APIFixture.basic("root"))
                #expect(badLimit.status == .badRequest && badLimit.errorCode == "bad_limit")
            }
        }
    }

    @Test func privateAddressesNeedTheFlagLinkLocalNever() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.webhookAllowPrivate = true }
            try await fixture.test { client in
                let local = try await Self.create(client, ["url": "http://127.0.0.1:9000/hook", "events": ["sent"]])
                #expect(local.status == .created)
                let metadata = try await Self.create(client, ["url": "http://169.254.169.254/", "events": ["sent"]])
                #expect(metadata.status == .badRequest && metadata.errorCode == "bad_url")
            }
        }
    }

    /// Events go into the outbox only for a user some webhook listens to, for the events it
    /// wants; with no webhook at all nothing is written (the record scripts cost one EXISTS).
    @Test func eventsReachTheOutboxOnlyWhenWanted() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let outbox = fixture.keys.webhookOutbox
            try await fixture.test { client in
                let later = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
                func scheduleAndCancel(_ user: String) async throws {
                    let sent = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: APIFixture.basic(user) + [.contentType: "application/json"],
                        body: APIFixture.json(["message": "m", "richType": "text", "payload": "p", "sendAt": later]))
                    let id = try #require(sent.json["id"] as? String)
                    let cancelled = try await client.execute(
                        uri: "/api/notifications/\(id)", method: .delete, headers: APIFixture.basic(user))
                    #expect(cancelled.status == .ok)
                }
                try await scheduleAndCancel("alice")
                #expect(try await fixture.redis.send("EXISTS", outbox, fixture.keys.webhookWants).int == 0)
                let created = try await Self.create(client, ["url": "https://example.com/hook", "events": ["cancelled"]])
                let id = try #require(created.json["id"] as? String)
                try await scheduleAndCancel("bob")
                #expect(try await fixture.redis.send("XLEN", outbox).int == 0)
                try await scheduleAndCancel("alice")
                let entries = try await fixture.redis.send("XRANGE", outbox, "-", "+").array ?? []
                #expect(entries.count == 1)
                let fields = entries.first?.array?.last?.array?.compactMap(\.string) ?? []
                #expect(fields.contains("cancelled") && fields.contains("alice"))
                // Deleting the last webhook takes the wants counters with it.
                _ = try await client.execute(uri: "/api/webhooks/\(id)", method: .delete, headers: APIFixture.basic("alice"))
                #expect(try await fixture.redis.send("EXISTS", fixture.keys.webhookWants).int == 0)
            }
        }
    }
}
