import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// `/console/webhooks`: an app's webhooks without secrets, one's attempts and dead letters, and
/// their replay by an operator (audited, CSRF-checked).
@Suite("Console webhooks", .serialized)
struct ConsoleWebhookTests {
    @Test func webhooksAttemptsAndDeadLettersAreShownAndReplayed() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let created = try await client.execute(
                    uri: "/api/webhooks", method: .post, headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: APIFixture.json([
                        "url": "https://hooks.example.com/richpush?token=s3cr3t", "events": ["sent"],
                        "secret": "a-very-secret-value-1234", "description": "<ops>",
                    ]))
                #expect(created.status == .created, "\(String(buffer: created.body))")
                let id = try #require(created.json["id"] as? String)
                let store = RedisWebhookStore(redis: fixture.api.redis, keys: fixture.api.keys)
                for index in 0..<3 {
                    let delivery = WebhookDelivery(
                        id: "d\(index)", webhook: id, body: Array("{\"events\":[]}".utf8), attempts: 5, firstAttempt: 1_700_000_000_000,
                        events: 1, lastError: "HTTP 500")
                    let attempt = WebhookAttempt(
                        deliveryId: "d\(index)", attempt: 5, at: "2026-11-26T20:00:00Z", status: 500, durationMs: 12, events: 1,
                        outcome: .dead, error: "HTTP 500")
                    try await store.record(attempt, of: delivery, result: .dead)
                }
                let bob = try await client.consoleSignIn("bob")
                let list = try await client.consoleGet("/console/webhooks", session: bob)
                #expect(list.status == .ok)
                let hooks = try #require(list.json["webhooks"] as? [[String: Any]])
                #expect(
                    hooks.count == 1 && hooks.first?["url"] as? String == "https://hooks.example.com/richpush (credentials or query hidden)"
                )
                let detail = try await client.consoleGet("/console/webhooks?id=\(id)", session: bob)
                #expect((detail.json["attempts"] as? [Any])?.count == 3 && (detail.json["deadLetters"] as? [Any])?.count == 3)
                let page = String(
                    buffer: try await client.consoleGet("/console/webhooks?app=default&id=\(id)", session: bob, html: true).body)
                #expect(page.contains("&lt;ops&gt;") && page.contains("HTTP 500") && !page.contains("Replay every dead delivery"))
                #expect(
                    !page.contains("a-very-secret-value") && !page.contains("s3cr3t")
                        && !String(buffer: detail.body).contains("secret-value"))

                let viewer = try await client.consolePost("/console/webhooks/replay", session: bob, [("id", id)])
                #expect(viewer.status == .forbidden && viewer.errorCode == "console_forbidden")
                let alice = try await client.consoleSignIn("alice")
                let crossSite = try await client.consolePost(
                    "/console/webhooks/replay", session: alice, [("id", id)],
                    headers: [.origin: "http://evil.example", .contentType: "application/x-www-form-urlencoded"])
                #expect(crossSite.status == .forbidden && crossSite.errorCode == "cross_site_request")
                for (form, status, code) in [
                    ([("id", "nope")], HTTPResponse.Status.badRequest, "bad_id"), ([], .badRequest, "missing_field"),
                    ([("id", "wh_0000000000000000")], .notFound, "not_found"),
                    ([("app", "Bad App"), ("id", id)], .badRequest, "bad_app_id"),
                ]
                    as [([(String, String)], HTTPResponse.Status, String)]
                {
                    let response = try await client.consolePost("/console/webhooks/replay", session: alice, form)
                    #expect(response.status == status && response.errorCode == code, "\(form): \(String(buffer: response.body))")
                }
                let replay = try await client.consolePost("/console/webhooks/replay", session: alice, [("id", id)])
                #expect(replay.status == .ok && replay.json["replayed"] as? Int == 3)
                #expect(try await store.deadLetters(webhook: id, limit: 10).isEmpty)
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let replays = entries.filter { $0["action"] as? String == "webhook.replay" }
                #expect(
                    replays.map { $0["outcome"] as? String } == [
                        "ok", "started", "refused: cross_site_request", "refused: console_forbidden",
                    ])
                #expect(replays.first?["done"] as? Int == 3 && replays.first?["user"] as? String == "alice")
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                    name: "bob", ConsoleAccess(role: .viewer, apps: ["shop"]))
                #expect(try await client.consoleGet("/console/webhooks", session: bob).status == .forbidden)
            }
        }
    }
}
