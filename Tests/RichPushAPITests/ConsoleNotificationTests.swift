import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// `GET /console/notifications`: one notification by id, in an app the user sees.
@Suite("Console notifications")
struct ConsoleNotificationTests {
    @Test func aNotificationIsFoundByIdWithItsRecordAndStatus() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let sent = try await client.sendImage("alice", message: "<b>Sale</b> & more")
                #expect(sent.status == .accepted)
                let id = try #require((sent.json["id"] as? String).flatMap(Int.init))
                let bob = try await client.consoleSignIn("bob")
                let found = try await client.consoleGet("/console/notifications?id=\(id)", session: bob)
                #expect(found.status == .ok)
                #expect(found.json["creator"] as? String == "alice")
                #expect(found.json["message"] as? String == "<b>Sale</b> & more")
                #expect(found.json["payloadBytes"] as? Int == TestAPI.png.count)
                #expect(found.json["state"] as? String == "queued")
                #expect(found.json["devices"] is [Any])
                let page = String(buffer: try await client.consoleGet("/console/notifications?app=default&id=\(id)", session: bob, html: true).body)
                #expect(page.contains("&lt;b&gt;Sale&lt;/b&gt; &amp; more") && page.contains("Notification \(id): queued"))
                let form = try await client.consoleGet("/console/notifications", session: bob, html: true)
                #expect(form.status == .ok && String(buffer: form.body).contains("Find a notification"))
                for (query, status, code) in [("id=999999", HTTPResponse.Status.notFound, "not_found"), ("id=abc", .badRequest, "bad_id"),
                                              ("app=Nope&id=1", .badRequest, "bad_app_id"), ("", .badRequest, "missing_field")] {
                    let response = try await client.consoleGet("/console/notifications?\(query)", session: bob)
                    #expect(response.status == status, "\(query)")
                    #expect(response.errorCode == code, "\(query)")
                }
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(name: "bob", ConsoleAccess(role: .viewer, apps: ["shop"]))
                let scoped = try await client.consoleGet("/console/notifications?id=\(id)", session: bob)
                #expect(scoped.status == .forbidden, "the default app is not among bob's apps")
                #expect(try await client.execute(uri: "/console/notifications?id=\(id)", method: .get).status == .unauthorized)
            }
        }
    }
}
