import APITestSupport
import Foundation
import Hiredis
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// The overview: per-app numbers from the queue's own stats, the workers, and the live stream.
@Suite("Console overview")
struct ConsoleOverviewTests {
    @Test func theOverviewShowsEachAppsWorkFromTheQueuesStats() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.jobQueue.enqueue((0..<3).map { _ in JobRequest(type: "probe", payload: [1], scope: "shop") })
            try await fixture.api.jobQueue.enqueue([JobRequest(type: "probe", payload: [1], scope: "news")])
            try await fixture.addDeadLetter(app: "shop", error: "timeout")
            try await fixture.addDeadLetter(app: "quiet", error: "timeout")
            // A scheduled send of shop, and a retry of shop (packed as the retry script packs it).
            try await fixture.api.jobQueue.enqueue([JobRequest(type: "probe", payload: [1], scope: "shop")], at: [JobQueue.nowMilliseconds() + 3_600_000])
            try await fixture.api.redis.run(RedisScript("""
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
                #expect(html.contains("<td>1</td><td>1</td><td>1</td></tr>"), "scheduled, retrying, dead")
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
            try await fixture.api.jobQueue.enqueue([JobRequest(type: "probe", payload: [1], scope: "shop")])
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let response = try await client.execute(uri: "/console/events", method: .get, headers: alice + [.accept: "text/event-stream"])
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
                    let second = try await client.execute(uri: "/console/events", method: .get, headers: alice + [.accept: "text/event-stream"])
                    if second.status == .ok { #expect(String(buffer: second.body).contains("event: overview")) }
                    return second.status == .ok
                }
                let refused = try await client.execute(uri: "/console/events", method: .get, headers: [.accept: "text/event-stream"])
                #expect(refused.status == .unauthorized)
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
                for (path, type) in [("/console/console.js", "text/javascript"), ("/console/console.css", "text/css"), ("/console/login", "text/html")] {
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

enum ConsolePagePolicy {
    static let expected = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}
