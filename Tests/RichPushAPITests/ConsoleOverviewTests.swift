import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushQueue
import RichPushStorage
import Synchronization
import Testing

/// The overview: per-app numbers from the queue's own stats, the workers, and the live stream.
@Suite("Console overview")
struct ConsoleOverviewTests {
    @Test func theOverviewShowsEachAppsWorkFromTheQueuesStats() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.jobQueue.enqueue((0..<3).map { _ in JobRequest(type: "probe", payload: [1], app: "shop") })
            try await fixture.api.jobQueue.enqueue([JobRequest(type: "probe", payload: [1], app: "news")])
            try await fixture.addDeadLetter(app: "shop", error: "timeout")
            try await fixture.addDeadLetter(app: "quiet", error: "timeout")
            // A scheduled send of shop, and a retry of shop (packed as the retry script packs it).
            try await fixture.api.jobQueue.enqueue(
                [JobRequest(type: "probe", payload: [1], app: "shop")], at: [JobQueue.nowMilliseconds() + 3_600_000])
            try await fixture.api.redis.run(
                RedisScript(
                    """
                    return redis.call('ZADD', KEYS[1], ARGV[1], cmsgpack.pack({'v', '1', 'type', 'probe', 'payload', 'x', 'enq', '1', 'app', 'shop', 'lane', 'now', 'attempt', '2', 'err', 'boom'}))
                    """), keys: [fixture.api.queue.delayedKey], arguments: [JobQueue.nowMilliseconds() + 3_600_000])
            try await fixture.api.test { client in
                let root = try await client.consoleSignIn("root")
                let overview = try await client.consoleGet("/console/overview.json", session: root)
                let apps = try #require(overview.json["apps"] as? [[String: Any]])
                #expect(apps.map { $0["app"] as? String } == ["news", "quiet", "shop"], "busy apps and apps with parked jobs")
                let shop = try #require(apps.last)
                #expect(shop["waiting"] as? Int == 3)
                #expect(shop["scheduled"] as? Int == 1 && shop["retrying"] as? Int == 1 && shop["dead"] as? Int == 1, "\(shop)")
                #expect(apps[1]["dead"] as? Int == 1 && apps[1]["waiting"] as? Int == 0)
                #expect(overview.json["parkedComplete"] as? Bool == true)
                #expect(((overview.json["totals"] as? [String: Any])?["deadLetters"]) as? Int == 2)
                let html = String(buffer: try await client.consoleGet("/console", session: root, html: true).body)
                #expect(html.contains("<th scope=\"row\">shop</th><td>3</td>"))
                #expect(
                    html.contains("<td>1</td><td>1</td><td>1</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>"),
                    "scheduled, retrying, dead; no rates yet")
                // An operator of one app sees that app, and no deployment totals.
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys)
                    .setConsoleAccess(name: "bob", ConsoleAccess(role: .viewer, apps: ["news"]))
                let bob = try await client.consoleSignIn("bob")
                let scoped = try await client.consoleGet("/console/overview.json", session: bob)
                #expect((scoped.json["apps"] as? [[String: Any]])?.map { $0["app"] as? String } == ["news"])
                #expect(scoped.json["totals"] == nil)
            }
        }
    }

    @Test func theLiveStreamSendsTheNumbersAsServerSentEvents() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server) {
                $0.console.liveInterval = .milliseconds(10)
                $0.console.liveStreamEvents = 3
                $0.console.maxLiveStreams = 1
            }
            try await fixture.api.jobQueue.enqueue([JobRequest(type: "probe", payload: [1], app: "shop")])
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let response = try await client.execute(
                    uri: "/console/events", method: .get, headers: alice + [.accept: "text/event-stream"])
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/event-stream; charset=utf-8")
                let text = String(buffer: response.body)
                #expect(text.hasPrefix("retry: 1000\n\n"))
                let events = text.components(separatedBy: "\n\n").filter { $0.hasPrefix("event: overview\ndata: ") }
                #expect(events.count == 3, "one every interval, as many as a stream sends")
                let data = try #require(events.first.map { Data($0.dropFirst("event: overview\ndata: ".count).utf8) })
                let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                #expect((object["apps"] as? [[String: Any]])?.first?["app"] as? String == "shop")
                // One slot: the ended stream gives it back (once the server has released its body).
                try await waitUntil(timeout: .seconds(30), "the stream's slot to come back") {
                    let second = try await client.execute(
                        uri: "/console/events", method: .get, headers: alice + [.accept: "text/event-stream"])
                    if second.status == .ok { #expect(String(buffer: second.body).contains("event: overview")) }
                    return second.status == .ok
                }
                let refused = try await client.execute(uri: "/console/events", method: .get, headers: [.accept: "text/event-stream"])
                #expect(refused.status == .unauthorized)
            }
        }
    }

    /// A worker settles shop's jobs while the stream runs (of every 4, one sent back to retry,
    /// one dead-lettered, two done; each job with 2 pushes refused as `BadDeviceToken`, every 3rd
    /// with one more as `http_410`) and keeps one more waiting each time: the rates appear from
    /// the second event and move, and the totals behind them are exactly what the worker did.
    /// Events 1 s apart: at 250 ms, a full suite on 2 cores settled about one job per interval,
    /// too few for every kind to show up in five intervals.
    @Test func theLiveStreamShowsEachAppsRatesOfJobsDoneRetriedAndDeadLettered() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server) {
                $0.console.liveInterval = .seconds(1)
                $0.console.liveStreamEvents = 6
            }
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            try await queue.enqueue((0..<20).map { _ in JobRequest(type: "probe", payload: [1], app: "shop") })
            let stop = StopFlag()
            let worker = Task { () -> (settled: Int, retried: Int, dead: Int, gone: Int, sent: Int) in
                var counts = (settled: 0, retried: 0, dead: 0, gone: 0, sent: 0)
                while !stop.isSet {
                    try await queue.enqueue([JobRequest(type: "probe", payload: [1], app: "shop")])
                    guard let job = try await queue.take(for: "w1", count: 1).first.map({ try $0.get() }) else { continue }
                    counts.settled += 1
                    // The failed pushes as the rich-push worker counts them: one call per job that had some.
                    let gone = counts.settled % 3 == 0 ? 1 : 0
                    try await queue.countFailedPushes(["BadDeviceToken": 2, "http_410": gone], app: "shop")
                    counts.gone += gone
                    if counts.settled % 4 == 0 {
                        try await queue.deadLetter(id: job.id, error: "boom")
                        counts.dead += 1
                    } else if counts.settled % 4 == 1 {
                        // A retry whose other pushes went out: they count as sent.
                        try await queue.retry(job, after: .seconds(3600), error: "later", accepted: 1)
                        counts.retried += 1
                        counts.sent += 1
                    } else {
                        // The pushes the platform accepted, as the rich-push worker tells them with the ack.
                        try await queue.acknowledge(accepted: [(job.id, job.inFlightApp, 3)], consumer: "w1")
                        counts.sent += 3
                    }
                }
                return counts
            }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let response = try await client.execute(
                    uri: "/console/events", method: .get, headers: alice + [.accept: "text/event-stream"])
                stop.set()
                let counts = try await worker.value
                let events = try String(buffer: response.body).components(separatedBy: "\n\n").filter {
                    $0.hasPrefix("event: overview\ndata: ")
                }
                .map {
                    try #require(
                        try JSONSerialization.jsonObject(with: Data($0.dropFirst("event: overview\ndata: ".count).utf8)) as? [String: Any])
                }
                #expect(events.count == 6)
                let shop = events.map { ($0["apps"] as? [[String: Any]])?.first { $0["app"] as? String == "shop" } }
                #expect(shop.first??["rates"] == nil, "no rate before a second snapshot")
                let rates = shop.dropFirst().compactMap { $0?["rates"] as? [String: Any] }
                #expect(rates.count == 5, "\(shop)")
                for name in ["sent", "done", "retried", "deadLettered"] {
                    #expect(rates.contains { ($0[name] as? Double ?? 0) > 0 }, "\(name) moved: \(rates)")
                }
                let failing = rates.compactMap { $0["failedByReason"] as? [String: Double] }
                #expect(failing.count == 5 && failing.contains { ($0["BadDeviceToken"] ?? 0) > 0 }, "failures by reason moved: \(failing)")
                #expect(
                    failing.allSatisfy { Set($0.keys).isSubset(of: ["BadDeviceToken", "http_410"]) && $0.values.allSatisfy { $0 > 0 } })
                // The totals the rates come from: kept by the queue's scripts, exactly the worker's.
                let now = try await client.consoleGet("/console/overview.json", session: alice)
                let totals = try #require((now.json["apps"] as? [[String: Any]])?.first { $0["app"] as? String == "shop" })
                #expect(totals["retried"] as? Int == counts.retried && totals["deadLettered"] as? Int == counts.dead, "\(totals) \(counts)")
                #expect(totals["done"] as? Int == counts.settled - counts.retried - counts.dead)
                #expect(totals["sent"] as? Int == counts.sent, "\(totals) \(counts)")
                #expect(
                    totals["failedByReason"] as? [String: Int]
                        == ["BadDeviceToken": 2 * counts.settled, "http_410": counts.gone].filter { $0.value > 0 }, "\(totals) \(counts)")
                let page = String(buffer: try await client.consoleGet("/console", session: alice, html: true).body)
                #expect(
                    page.contains(
                        "<th scope=\"col\">Sent/s</th><th scope=\"col\">Done/s</th><th scope=\"col\">Retried/s</th><th scope=\"col\">Dead-lettered/s</th><th scope=\"col\">Failed/s by reason</th>"
                    ))
                #expect(page.contains("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>"), "no rate at page load")
                #expect(page.contains(#"<a href="/device">The browser device</a>"#))
            }
        }
    }

    @Test func theWorkersShareIsAnAccessibleEscapedChart() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            try await queue.enqueue((0..<4).map { _ in JobRequest(type: "probe", payload: [1], app: "shop") })
            for (name, count) in [("w<1>&\"x", 3), ("w2", 1)] {
                let jobs = try await queue.take(for: name, count: count).map { try $0.get() }
                #expect(jobs.count == count)
                try await queue.acknowledge(jobs.map { ($0.id, $0.inFlightApp) }, consumer: name)
            }
            try await fixture.api.test { client in
                let bob = try await client.consoleSignIn("bob")
                let html = String(buffer: try await client.consoleGet("/console", session: bob, html: true).body)
                let start = try #require(html.range(of: "<svg "))
                let end = try #require(html.range(of: "</svg>"))
                let svg = String(html[start.lowerBound..<end.upperBound])
                #expect(
                    svg.contains(#"data-chart="workers-share" role="img" aria-label="Each worker&#39;s share of jobs processed""#), "\(svg)"
                )
                #expect(
                    svg.contains("<title>")
                        && svg.contains("<desc>Jobs processed by each of 2 workers, 4 in all: w2 1, w&lt;1&gt;&amp;&quot;x 3</desc>"),
                    "\(svg)")
                #expect(svg.contains(#"data-label="w&lt;1&gt;&amp;&quot;x" data-count="3""#) && svg.contains(#"data-count="1""#))
                #expect(svg.contains(">3 (75%)</text>") && svg.contains(">1 (25%)</text>"), "each count and share as text: \(svg)")
                #expect(!html.contains("w<1>"), "every name escaped")
            }
        }
    }

    @Test func redisDownIs503WithRetryAfterAndTheConsoleRecovers() async throws {
        try await withRedisServer(appendOnly: true) { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                server.stop()
                let json = try await client.consoleGet("/console/overview.json", session: alice)
                #expect(json.status == .serviceUnavailable)
                #expect(json.headers[.retryAfter] != nil)
                #expect(json.errorCode == "unavailable")
                let page = try await client.consoleGet("/console/dead-letters", session: alice, html: true)
                #expect(page.status == .serviceUnavailable)
                #expect(page.headers[.retryAfter] != nil)
                #expect(String(buffer: page.body).contains("unavailable"))
                let signIn = try await client.consolePost("/console/login", session: [:], [("user", "alice"), ("password", "alice-pw")])
                #expect(signIn.status == .serviceUnavailable)
                try await server.start()
                try await waitUntil(timeout: .seconds(60), "the console to answer again") {
                    try await client.consoleGet("/console/overview.json", session: alice).status == .ok
                }
            }
        }
    }

    @Test func theAssetsAndSignInPageAreServedUnderThePolicy() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                for (path, type) in [
                    ("/console/console.js", "text/javascript"), ("/console/console.css", "text/css"), ("/console/login", "text/html"),
                ] {
                    let response = try await client.execute(uri: path, method: .get)
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType] == "\(type); charset=utf-8")
                    #expect(response.headers[.contentSecurityPolicy] == ConsolePagePolicy.expected)
                    #expect(response.body.readableBytes > 500, "\(path) has its content")
                }
                let login = String(buffer: try await client.execute(uri: "/console/login", method: .get).body)
                #expect(login.contains("<form method=\"post\" action=\"/console/login\"") && login.contains("name=\"viewport\""))
            }
        }
    }
}

/// Tells a loop in another task to stop after its current step (cancelling could cut a step short).
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

enum ConsolePagePolicy {
    static let expected =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}
