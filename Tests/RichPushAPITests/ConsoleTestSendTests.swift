import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// `/console/test-send`: a notification to exactly the chosen installations, through the queue,
/// and its result page; bounds and refusals.
@Suite("Console test send", .serialized)
struct ConsoleTestSendTests {
    @Test func aTestSendQueuesOneJobNamingExactlyTheChosenDevices() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let first = try await client.register("alice", handle: "aa01")
                let second = try await client.register("alice", handle: "aa02")
                let other = try await client.register("bob", handle: "bb01")
                let alice = try await client.consoleSignIn("alice")
                let sent = try await client.consolePost(
                    "/console/test-send", session: alice,
                    [("installations", "\(first), \(second)"), ("message", "Test <1>")])
                #expect(sent.status == .accepted, "\(String(buffer: sent.body))")
                let id = try #require(sent.json["id"] as? Int)
                #expect(sent.json["installations"] as? [String] == [first, second])
                // One job, in the app's now lane, naming exactly those two.
                let queue = fixture.api.jobQueue
                try await queue.ensureGroup()
                let jobs = try await queue.take(for: "c", count: 10).map { try $0.get() }
                #expect(jobs.count == 1)
                let delivery = try RichPushJob.delivery(of: try #require(jobs.first))
                #expect(
                    delivery.notification == id && delivery.installations == [first, second]
                        && !(delivery.installations ?? []).contains(other))
                let record = try #require(try await fixture.api.notifications.notification(id: id))
                #expect(
                    record.message == "Test <1>" && record.creator == "alice" && record.target == "console-test-send || !console-test-send")
                let result = try await client.consoleGet("/console/test-send?id=\(id)&i=\(first)&i=\(second)", session: alice)
                #expect(result.json["state"] as? String == "queued")
                #expect((result.json["devices"] as? [[String: Any]])?.map { $0["state"] as? String } == ["queued", "queued"])
                let page = try await client.consoleGet("/console/test-send?id=\(id)&i=\(first)", session: alice, html: true)
                #expect(page.headers[HTTPField.Name("Refresh")!] == "2", "read again while an outcome is missing")
                #expect(String(buffer: page.body).contains("Test send \(id)"))
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                #expect(entries.filter { $0["action"] as? String == "test-send" }.map { $0["outcome"] as? String } == ["ok", "started"])
            }
        }
    }

    @Test func boundsAndRefusals() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let device = try await client.register("alice", handle: "aa01")
                let bob = try await client.consoleSignIn("bob")
                let alice = try await client.consoleSignIn("alice")
                let viewer = try await client.consolePost(
                    "/console/test-send", session: bob, [("installations", device), ("message", "hi")])
                #expect(viewer.status == .forbidden && viewer.errorCode == "console_forbidden")
                let form = String(buffer: try await client.consoleGet("/console/test-send", session: bob, html: true).body)
                #expect(!form.contains("<button type=\"submit\">Send</button>"))
                let crossSite = try await client.consolePost(
                    "/console/test-send", session: alice, [("installations", device), ("message", "hi")],
                    headers: [.origin: "http://evil.example", .contentType: "application/x-www-form-urlencoded"])
                #expect(crossSite.status == .forbidden && crossSite.errorCode == "cross_site_request")
                let eleven = (1...11).map { "dev-\($0)" }.joined(separator: " ")
                let cases: [([(String, String)], String)] = [
                    ([("installations", eleven), ("message", "hi")], "bad_selection"),
                    ([("message", "hi")], "bad_selection"),
                    ([("installations", "bad_id!"), ("message", "hi")], "bad_installation"),
                    ([("installations", device)], "bad_message"),
                    ([("installations", device), ("message", String(repeating: "m", count: 201))], "bad_message"),
                    ([("installations", "\(device) not-registered"), ("message", "hi")], "unknown_installation"),
                    ([("app", "No App"), ("installations", device), ("message", "hi")], "bad_app_id"),
                ]
                for (fields, code) in cases {
                    let response = try await client.consolePost("/console/test-send", session: alice, fields)
                    #expect(response.status == .badRequest && response.errorCode == code, "\(fields): \(String(buffer: response.body))")
                }
                #expect(try await fixture.api.jobQueue.stats().waiting == 0, "nothing was sent")
                let missing = try await client.consoleGet("/console/test-send?id=999&i=\(device)", session: alice)
                #expect(missing.status == .notFound)
            }
        }
    }
}
