import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// `GET /console/devices`: an app's installations by id, user, tag, platform and token prefix,
/// and one device's recent pushes.
@Suite("Console devices")
struct ConsoleDeviceTests {
    @Test func devicesAreFoundByEachCriterionWithTheirRecentPushes() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let phone = try await client.register("alice", handle: "abc111", tags: ["sports"])
                let tablet = try await client.register("alice", handle: "abc222", tags: ["news"])
                let other = try await client.register("bob", handle: "zzz333", tags: ["sports"])
                let browser = try await Self.register(client, "bob", handle: "fcm-token-4", platform: "fcm")
                let viewer = try await client.consoleSignIn("bob")
                func found(_ query: String) async throws -> Set<String> {
                    let response = try await client.consoleGet("/console/devices?\(query)", session: viewer)
                    #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                    return Set((response.json["installations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
                }
                #expect(try await found("") == [phone, tablet, other, browser], "a script asking for nothing gets every installation")
                #expect(try await found("user=alice") == [phone, tablet])
                #expect(try await found("tag=sports") == [phone, other])
                #expect(try await found("tag=sports&user=bob") == [other])
                #expect(try await found("platform=fcm") == [browser])
                #expect(try await found("platform=apns&handle=abc") == [phone, tablet])
                #expect(try await found("handle=abc2") == [tablet])
                #expect(try await found("id=\(other)") == [other])
                #expect(try await found("id=nope").isEmpty)

                // A device's page lists the pushes its ledger entries name.
                let sent = try await client.sendImage("alice", message: "to the phone")
                let id = try #require((sent.json["id"] as? String).flatMap(Int.init))
                _ = try await fixture.api.ledger.leaseDeliveries(
                    [DeliveryKey(notification: id, installation: phone)], owner: "w", duration: .seconds(30))
                try await fixture.api.ledger.recordDeliveries([
                    id: [DeliveryResult(installation: phone, counter: .failed, error: "<bad token>")]
                ])
                let one = try await client.consoleGet("/console/devices?id=\(phone)", session: viewer)
                let pushes = try #require(one.json["recentPushes"] as? [[String: Any]])
                #expect(pushes.count == 1)
                #expect(pushes.first?["notification"] as? Int == id && pushes.first?["state"] as? String == "failed")
                #expect(pushes.first?["error"] as? String == "<bad token>")
                let page = String(buffer: try await client.consoleGet("/console/devices?id=\(phone)", session: viewer, html: true).body)
                #expect(page.contains("<table id=\"pushes\">") && page.contains("&lt;bad token&gt;") && page.contains("id=\(id)\""))
                let tabletPushes = try await client.consoleGet("/console/devices?id=\(tablet)", session: viewer)
                #expect((tabletPushes.json["recentPushes"] as? [Any])?.isEmpty == true)
                let form = String(buffer: try await client.consoleGet("/console/devices", session: viewer, html: true).body)
                #expect(form.contains("<h1>Devices</h1>") && !form.contains("<table id=\"devices\">"), "a browser gets the form first")
                #expect(form.contains("<a href=\"/console/devices\">Devices</a>"), "in the navigation")
            }
        }
    }

    @Test func badInputIs400NamingItAndAnotherAppIs403() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let viewer = try await client.consoleSignIn("bob")
                for (query, code, text) in [
                    ("platform=pager", "bad_filter", "platform: one of"),
                    ("user=\(String(repeating: "u", count: 65))", "bad_filter", "user is longer"),
                    ("id=\(String(repeating: "i", count: 129))", "bad_filter", "id is longer"), ("cursor=x", "bad_filter", "cursor"),
                    ("app=-", "bad_app_id", "app:"),
                ] {
                    let response = try await client.consoleGet("/console/devices?\(query)", session: viewer)
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(response.errorCode == code, "\(query)")
                    #expect(response.errorMessage.contains(text), "\(query): \(String(buffer: response.body))")
                }
                let page = try await client.consoleGet("/console/devices?platform=pager", session: viewer, html: true)
                #expect(page.status == .badRequest && String(buffer: page.body).contains("id=\"filter-problem\">platform: one of"))
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                    name: "bob", ConsoleAccess(role: .viewer, apps: ["shop"]))
                let forbidden = try await client.consoleGet("/console/devices?user=alice", session: viewer)
                #expect(forbidden.status == .forbidden && forbidden.errorCode == "console_forbidden")
                #expect(try await client.execute(uri: "/console/devices?user=alice", method: .get).status == .unauthorized)
            }
        }
    }

    /// Registers a device of another platform than the seed's helper does; its id.
    static func register(_ client: any TestClientProtocol, _ user: String, handle: String, platform: String) async throws -> String {
        let id = try await client.execute(uri: "/api/register?handle=\(handle)", method: .post, headers: TestAPI.basic(user)) { response in
            try JSONDecoder().decode(String.self, from: Data(buffer: response.body))
        }
        let response = try await client.execute(
            uri: "/api/register/\(id)", method: .put, headers: TestAPI.basic(user),
            body: TestAPI.json(["Platform": platform, "Handle": handle, "Tags": [String]()]))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return id
    }
}
