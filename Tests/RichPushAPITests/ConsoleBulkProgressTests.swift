import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushQueue
import Testing

/// A bulk action's progress while it runs: a browser gets the page a batch at a time, a client
/// asking `application/x-ndjson` a JSON line a batch, and the action finishes whatever the client
/// does (one that leaves midway stops nothing). The plain JSON answer is the other console tests'.
@Suite("Console bulk progress", .serialized)
struct ConsoleBulkProgressTests {
    @Test func replayingAllThatMatchShowsABrowserEachBatchBeforeTheResult() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.addDeadLetters(1_200, app: "shop", error: "APNs timeout")
            try await fixture.addDeadLetters(3, app: "news", error: "APNs timeout")
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let root = try await client.consoleSignIn("root")
                let token = try await Self.count(client, alice, "/console/dead-letters/count", [("app", "shop")], expecting: 1_200)
                let page = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "1200")],
                    headers: ConsoleFixture.browser)
                #expect(page.status == .ok)
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                #expect(page.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'") == true)
                let html = String(buffer: page.body)
                let counts = try Self.counts(in: html, pattern: #"<li>Replayed ([0-9,]+) of 1,200</li>"#)
                #expect(counts.count >= 3, "one line per batch of 500: \(counts)")
                #expect(counts == counts.sorted() && counts.last == 1_200, "\(counts)")
                let heading = try #require(html.range(of: "<h1>Replaying 1,200 dead letters</h1>"))
                let firstLine = try #require(html.range(of: "<li>Replayed"))
                let result = try #require(html.range(of: #"<h2 id="result">Replayed 1,200 dead letters</h2>"#))
                #expect(
                    heading.upperBound <= firstLine.lowerBound && firstLine.upperBound <= result.lowerBound,
                    "heading, the lines, then the result")
                #expect(html.hasPrefix("<!doctype html>") && html.hasSuffix("</main></body></html>"))
                #expect(try await fixture.replayedOrigins().count == 1_200)
                #expect(try await fixture.deadLetterIDs().count == 3, "news' stay")
                let entry = try await Self.auditEntry(client, root, "dlq.replay-matching")
                #expect(entry?["done"] as? Int == 1_200 && entry?["requested"] as? Int == 1_200)
            }
        }
    }

    @Test func purgingAllThatMatchAnswersAJSONLineABatchThenTheResult() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.addDeadLetters(1_200, app: "shop", error: "BadDeviceToken")
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let token = try await Self.count(client, alice, "/console/dead-letters/count", [("action", "purge")], expecting: 1_200)
                let response = try await client.consolePost(
                    "/console/dead-letters/purge", session: alice, [("token", token), ("confirm", "1200")],
                    headers: ConsoleFixture.script + [.accept: "application/x-ndjson"])
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/x-ndjson")
                let lines = try Self.lines(response)
                let progress = lines.dropLast()
                #expect(progress.count >= 3, "one line per batch of 500: \(progress)")
                #expect(progress.allSatisfy { $0["requested"] as? Int == 1_200 && $0.count == 2 })
                let counts = progress.compactMap { $0["done"] as? Int }
                #expect(counts == counts.sorted() && counts.last == 1_200, "\(counts)")
                let last = try #require(lines.last)
                #expect(
                    last["action"] as? String == "purge" && last["done"] as? Int == 1_200 && last["requested"] as? Int == 1_200
                        && last["error"] == nil)
                #expect(try await fixture.deadLetterIDs().isEmpty)
            }
        }
    }

    @Test func aBrowserThatLeavesMidwayStopsNothing() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let warmUp = try await fixture.addDeadLetter(app: "news", error: "warm-up")
            try await fixture.addDeadLetters(1_200, app: "shop", error: "APNs timeout")
            // Holds the replay's second batch of 500, so the action is known to be running when the client leaves.
            let gate = GatedRedis(base: fixture.api.redis, isGated: GatedRedis.script(on: fixture.api.queue.deadKey))
            try await fixture.api.test(on: gate) { client in
                // Opened whatever happens: a held action would hold the server's shutdown at the test's end.
                defer { gate.open() }
                let alice = try await client.consoleSignIn("alice")
                let root = try await client.consoleSignIn("root")
                // The replay script loaded (a first call may answer NOSCRIPT and go again), then the gate counts.
                let selected = try await client.consolePost("/console/dead-letters/replay", session: alice, [("id", "q0/\(warmUp)")])
                #expect(selected.json["done"] as? Int == 1)
                gate.close(after: 1)
                let token = try await Self.count(client, alice, "/console/dead-letters/count", [("app", "shop")], expecting: 1_200)
                let form = "token=\(token)&confirm=1200"
                let request =
                    "POST /console/dead-letters/replay HTTP/1.1\r\nHost: localhost\r\nOrigin: \(ConsoleFixture.origin)\r\nAccept: text/html\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nCookie: \(alice[.cookie] ?? "")\r\nContent-Length: \(form.utf8.count)\r\n\r\n\(form)"
                let connection = try await RawHTTPConnection.send(request, port: try #require(client.port))
                defer { connection.reset() }
                let first = try await connection.read(until: "</li>")
                #expect(first.hasPrefix("HTTP/1.1 200"))
                #expect(first.contains("<li>Replayed 500 of 1,200</li>"), "the first batch shown while the second waits")
                #expect(!first.contains("id=\"result\""))
                // The second batch reached the gate: the action is running, and stays so while the client leaves.
                try await waitUntil(timeout: .seconds(60), "the second batch held") { gate.stopped >= 1 }
                connection.reset()
                gate.open()
                try await waitUntil(timeout: .seconds(60), "the replay's end in the audit log") {
                    try await Self.auditEntry(client, root, "dlq.replay-matching") != nil
                }
                let entry = try #require(try await Self.auditEntry(client, root, "dlq.replay-matching"))
                #expect(entry["outcome"] as? String == "ok" && entry["done"] as? Int == 1_200, "\(entry)")
                #expect(try await fixture.replayedOrigins().count == 1 + 1_200)
                #expect(try await fixture.deadLetterIDs().isEmpty)
            }
        }
    }

    @Test func aFailureMidwayIsTheLastLineAndAudited() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.addDeadLetters(1_200, app: "shop", error: "APNs timeout")
            let gate = GatedRedis(base: fixture.api.redis, isGated: GatedRedis.script(on: fixture.api.queue.deadKey))
            try await fixture.api.test(on: gate) { client in
                defer { gate.open() }
                let alice = try await client.consoleSignIn("alice")
                let root = try await client.consoleSignIn("root")
                // Redis lost at the second batch (the script loaded first, so that the first batch is one call).
                _ = try await client.consolePost("/console/dead-letters/replay", session: alice, [("id", "q0/0-1")])
                gate.close(after: 1, failing: RedisError(code: .connectionLost, message: "connection lost (test)"))
                var token = try await Self.count(client, alice, "/console/dead-letters/count", [("app", "shop")], expecting: 1_200)
                let response = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "1200")],
                    headers: ConsoleFixture.script + [.accept: "application/x-ndjson"])
                #expect(response.status == .ok, "the answer had begun")
                let lines = try Self.lines(response)
                #expect(lines.dropLast().compactMap { $0["done"] as? Int } == [500])
                let last = try #require(lines.last)
                #expect(last["done"] as? Int == 500 && last["requested"] as? Int == 1_200)
                #expect((last["error"] as? [String: Any])?["code"] as? String == "unavailable", "\(last)")
                let entry = try #require(try await Self.auditEntry(client, root, "dlq.replay-matching"))
                #expect((entry["outcome"] as? String)?.hasPrefix("failed") == true && entry["done"] as? Int == 500, "\(entry)")
                // The page says so too, after its lines; the 500 done stay done and a new count finds the rest.
                gate.close(after: 0, failing: RedisError(code: .connectionLost, message: "connection lost (test)"))
                token = try await Self.count(client, alice, "/console/dead-letters/count", [("app", "shop")], expecting: 700)
                let page = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "700")],
                    headers: ConsoleFixture.browser)
                let html = String(buffer: page.body)
                #expect(html.contains("<h2>Failed after 0 of 700</h2>") && html.contains("<code>unavailable</code>"), "\(html.suffix(600))")
                #expect(html.hasSuffix("</main></body></html>"))
                #expect(try await fixture.deadLetterIDs().count == 700)
            }
        }
    }

    @Test func cancellingAllThatMatchShowsEachBatch() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server) {
                $0.quotas.notificationsPerMinute = 2_000
                $0.quotas.notificationsBurst = 2_000
            }
            try await fixture.api.test { client in
                let at = JobQueue.nowMilliseconds() + 3_600_000
                for size in [1_000, 1_000] {
                    let items = (0..<size).map { _ in
                        ["richType": "text", "payload": "p", "message": "later", "sendAt": at] as [String: Any]
                    }
                    let batch = try await client.execute(
                        uri: "/api/notifications/batch", method: .post,
                        headers: TestAPI.basic("alice") + [.contentType: "application/json"],
                        body: TestAPI.json(["notifications": items]))
                    #expect(batch.status == .ok && batch.json["accepted"] as? Int == size, "\(String(buffer: batch.body).prefix(300))")
                }
                let alice = try await client.consoleSignIn("alice")
                let root = try await client.consoleSignIn("root")
                let token = try await Self.count(client, alice, "/console/queues/count", [("kind", "scheduled")], expecting: 2_000)
                let page = try await client.consolePost(
                    "/console/queues/cancel", session: alice, [("token", token), ("confirm", "2000")], headers: ConsoleFixture.browser)
                #expect(page.status == .ok)
                let html = String(buffer: page.body)
                let counts = try Self.counts(in: html, pattern: #"<li>Cancelled ([0-9,]+) of 2,000</li>"#)
                #expect(counts.count >= 3, "one line per pipeline of 500 cancels: \(counts)")
                #expect(counts == counts.sorted() && counts.last == 2_000, "\(counts)")
                #expect(
                    html.contains("<h1>Cancelling 2,000 scheduled sends</h1>")
                        && html.contains(#"<h2 id="result">Cancelled 2,000 scheduled sends</h2>"#))
                let left = try #require(try await client.consoleGet("/console/queues", session: alice).json["jobs"] as? [[String: Any]])
                #expect(left.isEmpty)
                #expect(try await Self.auditEntry(client, root, "scheduled.cancel-matching")?["done"] as? Int == 2_000)
            }
        }
    }

    /// Counts what `pairs` match at `path`; the confirmation's token.
    static func count(
        _ client: some TestClientProtocol, _ session: HTTPFields, _ path: String, _ pairs: [(String, String)], expecting: Int
    ) async throws -> String {
        let count = try await client.consolePost(path, session: session, pairs)
        #expect(count.json["count"] as? Int == expecting)
        return try #require(count.json["token"] as? String)
    }

    /// The numbers of the progress lines `pattern` (one group: the count, with commas) finds, in order.
    static func counts(in html: String, pattern: String) throws -> [Int] {
        let regex = try Regex(pattern)
        return html.matches(of: regex).compactMap { match in
            (match.output[1].substring).flatMap { Int($0.replacingOccurrences(of: ",", with: "")) }
        }
    }

    /// An `application/x-ndjson` answer's objects.
    static func lines(_ response: TestResponse) throws -> [[String: Any]] {
        try String(buffer: response.body).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    /// The newest audit entry of `action` that ended (`ok` or `failed`), if any, as `root` (signed in) reads it.
    static func auditEntry(_ client: some TestClientProtocol, _ root: HTTPFields, _ action: String) async throws -> [String: Any]? {
        let entries = try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]] ?? []
        return entries.first { $0["action"] as? String == action && $0["outcome"] as? String != "started" }
    }
}
