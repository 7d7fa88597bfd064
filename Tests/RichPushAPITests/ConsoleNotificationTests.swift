import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// `GET /console/notifications`: an app's notifications by id, creator, target tag, state and
/// time; a notification's page with its payload, rendered pushes and device timeline.
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
                let page = String(
                    buffer: try await client.consoleGet("/console/notifications?app=default&id=\(id)", session: bob, html: true).body)
                #expect(page.contains("&lt;b&gt;Sale&lt;/b&gt; &amp; more") && page.contains("Notification \(id): queued"))
                #expect(page.contains("<img src=\"/console/notifications/\(id)/payload?app=default\""), "a PNG payload is shown inline")
                let form = try await client.consoleGet("/console/notifications", session: bob, html: true)
                #expect(form.status == .ok && String(buffer: form.body).contains("<h1>Notifications</h1>"))
                for (query, status, code) in [
                    ("id=999999", HTTPResponse.Status.notFound, "not_found"), ("id=abc", .badRequest, "bad_id"),
                    ("app=Nope&id=1", .badRequest, "bad_app_id"), ("id=99999999999999999999", .badRequest, "bad_id"),
                ] {
                    let response = try await client.consoleGet("/console/notifications?\(query)", session: bob)
                    #expect(response.status == status, "\(query)")
                    #expect(response.errorCode == code, "\(query)")
                }
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                    name: "bob", ConsoleAccess(role: .viewer, apps: ["shop"]))
                let scoped = try await client.consoleGet("/console/notifications?id=\(id)", session: bob)
                #expect(scoped.status == .forbidden, "the default app is not among bob's apps")
                #expect(try await client.execute(uri: "/console/notifications?id=\(id)", method: .get).status == .unauthorized)
            }
        }
    }

    @Test func theSearchFindsByCreatorTagStateAndTimeAndPagesWithACursor() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                var ids: [String: Int] = [:]
                // An admin sends to any tags; a user to their own devices (the target `username:<user>`).
                for (name, user, target) in [
                    ("a1", "root", "sports"), ("a2", "root", "news && sports"), ("a3", "alice", nil), ("b1", "bob", nil),
                ] {
                    let sent = try await client.sendImage(user, message: "m-\(name)", target: target)
                    #expect(sent.status == .accepted, "\(name): \(String(buffer: sent.body))")
                    ids[name] = try #require((sent.json["id"] as? String).flatMap(Int.init))
                }
                let (a1, a2, a3, b1) = (try #require(ids["a1"]), try #require(ids["a2"]), try #require(ids["a3"]), try #require(ids["b1"]))
                let cancel = try await client.execute(uri: "/api/notifications/\(a3)", method: .delete, headers: TestAPI.basic("alice"))
                #expect(cancel.status == .ok || cancel.status == .noContent, "\(cancel.status)")
                let viewer = try await client.consoleSignIn("bob")
                func found(_ query: String) async throws -> [Int] {
                    let response = try await client.consoleGet("/console/notifications?\(query)", session: viewer)
                    #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                    return (response.json["notifications"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                }
                let all = try await found("")
                #expect(all == [b1, a3, a2, a1], "newest first")
                #expect(try await found("creator=root") == [a2, a1])
                #expect(try await found("creator=bob&tag=username") == [b1])
                #expect(try await found("creator=alice&tag=sports").isEmpty)
                #expect(try await found("tag=sports") == [a2, a1])
                #expect(try await found("tag=news") == [a2])
                #expect(try await found("tag=username%3Aalice") == [a3])
                #expect(try await found("state=cancelled") == [a3])
                #expect(try await found("state=queued&creator=root") == [a2, a1])
                #expect(try await found("from=-1h") == all)
                #expect(try await found("to=-1h").isEmpty)
                #expect(try await found("from=-1h&to=\(JobQueueClock.now + 3_600_000)") == all)
                #expect(try await found("cursor=\(a3)") == [a2, a1], "the cursor goes on below it")
                #expect(try await found("creator=root&cursor=\(a2)") == [a1])
                let page = String(
                    buffer: try await client.consoleGet("/console/notifications?tag=sports", session: viewer, html: true).body)
                #expect(
                    page.contains("href=\"/console/notifications?app=default&amp;id=\(a2)\"") && page.contains("m-a2")
                        && !page.contains("m-a3"))

                // Past the scan limit the page says so and gives a cursor; nothing is read one id per round trip.
                try await fixture.api.redis.send("SET", "\(fixture.api.keys.prefix):seq:notification", 100_000)
                let far = try await client.consoleGet("/console/notifications?creator=carol", session: viewer)
                #expect(far.json["limited"] as? Bool == false, "a creator's own index has nothing to scan")
                let limited = try await client.consoleGet("/console/notifications", session: viewer)
                #expect(limited.json["limited"] as? Bool == true)
                #expect(limited.json["scanned"] as? Int == 20_000)
                let next = try #require(limited.json["next"] as? Int)
                #expect(next == 100_001 - 20_000, "the ids below the last one read")
                let html = String(buffer: try await client.consoleGet("/console/notifications", session: viewer, html: true).body)
                #expect(html.contains("Searched the newest 20000 notification ids; refine the window") && html.contains("cursor=\(next)"))
            }
        }
    }

    @Test func badFiltersAre400sNamingTheProblemAndAnotherAppIs403() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let viewer = try await client.consoleSignIn("bob")
                let long = String(repeating: "x", count: 201)
                for (query, code, text) in [
                    ("state=lost", "bad_filter", "state: one of"),
                    ("creator=\(String(repeating: "c", count: 65))", "bad_filter", "creator is longer"),
                    ("tag=\(long)", "bad_filter", "tag is longer"), ("from=yesterday", "bad_filter", "from: give an ISO 8601"),
                    ("from=-1h&to=-2h", "bad_filter", "from must be before to"), ("cursor=-4", "bad_filter", "cursor"),
                    ("app=No%20Such", "bad_app_id", "app:"),
                    ("tag=\(String(repeating: "y", count: 300))", "field_too_long", "longer than 256"),
                ] {
                    let response = try await client.consoleGet("/console/notifications?\(query)", session: viewer)
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(response.errorCode == code, "\(query)")
                    #expect(response.errorMessage.contains(text), "\(query): \(String(buffer: response.body))")
                }
                let page = try await client.consoleGet("/console/notifications?state=lost", session: viewer, html: true)
                #expect(page.status == .badRequest)
                #expect(
                    String(buffer: page.body).contains("id=\"filter-problem\">state: one of")
                        && String(buffer: page.body).contains("role=\"search\""))
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                    name: "bob", ConsoleAccess(role: .viewer, apps: ["shop"]))
                let forbidden = try await client.consoleGet("/console/notifications?app=default&creator=alice", session: viewer)
                #expect(forbidden.status == .forbidden && forbidden.errorCode == "console_forbidden")
                #expect(try await client.consoleGet("/console/notifications?app=shop", session: viewer).status == .ok)
            }
        }
    }

    @Test func thePayloadIsServedWithItsTypeNeverSniffedAndOtherTypesAsADownload() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let image = try #require((try await client.sendImage("alice").json["id"] as? String).flatMap(Int.init))
                let text = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: TestAPI.basic("alice") + [.contentType: "application/json"],
                    body: TestAPI.json(["richType": "text", "payload": "<script>alert(1)</script>", "contentType": "text/plain"]))
                let other = try #require((text.json["id"] as? String).flatMap(Int.init))
                let viewer = try await client.consoleSignIn("bob")
                let png = try await client.consoleGet("/console/notifications/\(image)/payload?app=default", session: viewer)
                #expect(png.status == .ok)
                #expect(png.headers[.contentType] == "image/png")
                #expect(png.headers[.xContentTypeOptions] == "nosniff")
                #expect(png.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
                #expect(Array(buffer: png.body) == TestAPI.png)
                let download = try await client.consoleGet("/console/notifications/\(other)/payload", session: viewer)
                #expect(download.headers[.contentType] == "application/octet-stream")
                #expect(download.headers[.contentDisposition]?.hasPrefix("attachment") == true)
                #expect(String(buffer: download.body) == "<script>alert(1)</script>")
                let page = String(
                    buffer: try await client.consoleGet("/console/notifications?id=\(other)", session: viewer, html: true).body)
                #expect(page.contains("text/plain") && page.contains("download id=\"payload\"") && !page.contains("<img src"))
                #expect(try await client.consoleGet("/console/notifications/987654/payload", session: viewer).status == .notFound)
                #expect(try await client.execute(uri: "/console/notifications/\(image)/payload", method: .get).status == .unauthorized)
            }
        }
    }

    @Test func theTimelineShowsEachStepWithItsTimeAndThePushesAsRendered() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let phone = try await client.register("alice", handle: "aa11", tags: ["timeline"])
                let sent = try await client.sendImage("alice", message: "Timeline \"test\"")
                let id = try #require((sent.json["id"] as? String).flatMap(Int.init))
                // What a worker writes: the lease before the push, the outcome after it.
                let key = DeliveryKey(notification: id, installation: phone)
                #expect(try await fixture.api.ledger.leaseDeliveries([key], owner: "w1", duration: .seconds(30)) == [.leased])
                let before = JobQueueClock.now
                try await fixture.api.ledger.recordDeliveries([
                    id: [DeliveryResult(installation: phone, counter: .sent, adapterID: "apns-<1>")]
                ])
                // The device fetches its payload and reports it displayed and opened, through the API.
                #expect(
                    try await client.execute(
                        uri: "/api/notifications/\(id)?installation=\(phone)", method: .get, headers: TestAPI.basic("alice")
                    ).status == .ok)
                for kind in ["displayed", "opened"] {
                    let receipt = try await client.execute(
                        uri: "/api/notifications/\(id)/receipts", method: .post,
                        headers: TestAPI.basic("alice") + [.contentType: "application/json"],
                        body: TestAPI.json(["kind": kind, "installation": phone]))
                    #expect(receipt.status == .ok, "\(kind): \(String(buffer: receipt.body))")
                }
                let viewer = try await client.consoleSignIn("bob")
                let detail = try await client.consoleGet("/console/notifications?id=\(id)", session: viewer)
                let device = try #require((detail.json["devices"] as? [[String: Any]])?.first)
                #expect(
                    device["installation"] as? String == phone && device["platform"] as? String == "apns"
                        && device["fetched"] as? Bool == true)
                #expect(device["state"] as? String == "opened" && device["adapterId"] as? String == "apns-<1>")
                let times = try #require(device["times"] as? [String: Int])
                for step in ["at", "fetchedAt", "displayedAt", "openedAt"] {
                    #expect((times[step] ?? 0) >= Int(before), "\(step) in \(times)")
                }
                #expect((times["at"] ?? .max) <= (times["fetchedAt"] ?? 0) && (times["displayedAt"] ?? .max) <= (times["openedAt"] ?? 0))
                let rendered = try #require((detail.json["rendered"] as? [[String: Any]])?.first)
                #expect(rendered["format"] as? String == "apns")
                let payload = try #require(rendered["payload"] as? String)
                #expect(payload.contains("\"richId\" : \"\(id)\"") && payload.contains("content-available"), "\(payload)")
                let page = String(buffer: try await client.consoleGet("/console/notifications?id=\(id)", session: viewer, html: true).body)
                #expect(page.contains("<table id=\"timeline\">") && page.contains("apns-&lt;1&gt;"))
                #expect(page.contains("&quot;richMessage&quot; : &quot;Timeline \\&quot;test\\&quot;&quot;"), "the rendered JSON escaped")
                #expect(page.contains(ConsolePageTime.iso(times["openedAt"] ?? 0)))
                // The API's own status is unchanged by the times kept beside each step.
                let status = try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: TestAPI.basic("alice"))
                #expect(!String(buffer: status.body).contains("openedAt"))
            }
        }
    }
}

/// Times as the console's pages print them (ISO 8601, UTC, to the second).
enum ConsolePageTime {
    static func iso(_ milliseconds: Int) -> String { Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601) }
}

/// Milliseconds now, as the stores' clocks say.
enum JobQueueClock {
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
