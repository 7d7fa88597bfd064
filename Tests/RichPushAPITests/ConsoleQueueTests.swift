import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// `/console/queues`: scheduled sends and retries listed, paged and cancelled (the selected ones,
/// or exactly the counted set), and an app's sending paused and resumed.
@Suite("Console queues", .serialized)
struct ConsoleQueueTests {
    /// A scheduled send through the API, an hour ahead; its id.
    static func schedule(_ client: some TestClientProtocol, _ user: String = "alice", minutes: Int = 60) async throws -> Int {
        let at = Int64(Date().timeIntervalSince1970 * 1000) + Int64(minutes) * 60_000
        let response = try await client.execute(
            uri: "/api/notifications", method: .post, headers: TestAPI.basic(user) + [.contentType: "application/json"],
            body: TestAPI.json(["richType": "text", "payload": "p", "message": "later", "sendAt": at]))
        guard response.status == .accepted, let id = (response.json["id"] as? String).flatMap(Int.init) else {
            throw TestAPIError("scheduling failed: \(response.status) \(String(buffer: response.body))")
        }
        return id
    }

    /// A retry waiting in the delayed set, as the retry script leaves one.
    static let addRetry = RedisScript(
        """
        redis.call('ZADD', KEYS[1], ARGV[1], cmsgpack.pack({'v', '1', 'type', 'probe', 'payload', '{}', 'enq', ARGV[2], 'app', ARGV[3], 'lane', 'now',
          'attempt', '2', 'origin', 'o-' .. ARGV[1], 'err', 'APNs timeout'}))
        return 1
        """)

    @Test func cancellingAllThatMatchActsOnExactlyTheCountedSetEvenWhenMoreAreScheduled() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let now = JobQueue.nowMilliseconds()
            _ = try await fixture.api.redis.run(
                Self.addRetry, keys: [fixture.api.queue.delayedKey], arguments: [now + 30_000, now, "default"])
            try await fixture.api.test { client in
                var counted: [Int] = []
                for _ in 0..<6 { counted.append(try await Self.schedule(client)) }
                let alice = try await client.consoleSignIn("alice")
                let list = try await client.consoleGet("/console/queues", session: alice)
                let jobs = try #require(list.json["jobs"] as? [[String: Any]])
                #expect(jobs.count == 7)
                #expect(jobs.first?["kind"] as? String == "retry", "the retry is due first")
                #expect(jobs.filter { $0["kind"] as? String == "scheduled" }.count == 6)
                let filter = [("kind", "scheduled"), ("from", "+1m"), ("to", "+2h")]
                let count = try await client.consolePost("/console/queues/count", session: alice, filter)
                #expect(count.status == .ok)
                #expect(count.json["count"] as? Int == 6)
                let token = try #require(count.json["token"] as? String)
                // Between the count and the action: more that match.
                var later: [Int] = []
                for _ in 0..<3 { later.append(try await Self.schedule(client)) }
                let wrong = try await client.consolePost("/console/queues/cancel", session: alice, [("token", token), ("confirm", "9")])
                #expect(wrong.status == .conflict && wrong.errorCode == "confirmation_mismatch")
                let again = try #require(
                    try await client.consolePost("/console/queues/count", session: alice, filter).json["token"] as? String)
                let more = try await Self.schedule(client)
                let cancel = try await client.consolePost("/console/queues/cancel", session: alice, [("token", again), ("confirm", "9")])
                #expect(cancel.status == .ok)
                #expect(cancel.json["done"] as? Int == 9 && cancel.json["requested"] as? Int == 9)
                for id in counted + later { #expect(try await fixture.api.notifications.status(id: id)?.state == .cancelled, "\(id)") }
                #expect(try await fixture.api.notifications.status(id: more)?.state == .scheduled, "scheduled after the count: left alone")
                let left = try #require(try await client.consoleGet("/console/queues", session: alice).json["jobs"] as? [[String: Any]])
                #expect(left.map { $0["kind"] as? String } == ["retry", "scheduled"])
                #expect(left.last?["notification"] as? String == "default:\(more)")
                let reused = try await client.consolePost("/console/queues/cancel", session: alice, [("token", again), ("confirm", "9")])
                #expect(reused.status == .conflict && reused.errorCode == "confirmation_unknown")
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let cancels = entries.filter { $0["action"] as? String == "scheduled.cancel-matching" }
                #expect(cancels.map { $0["outcome"] as? String } == ["ok", "started"])
                #expect(cancels.first?["done"] as? Int == 9 && cancels.first?["user"] as? String == "alice")
                #expect((cancels.first?["target"] as? String)?.contains("kind=scheduled") == true)
            }
        }
    }

    /// 1,200 that match, cancelled by the store's batches (three of them, of 500), and one of the
    /// counted that went out meanwhile: too late, its job stays; the others' jobs leave the delayed set.
    @Test func cancellingManyThatMatchCancelsEachInBatches() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let sendAt = JobQueue.nowMilliseconds() + 3_600_000
            let drafts = (0..<1200).map { index in
                var draft = NotificationDraft(
                    message: "m\(index)", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice",
                    target: "t")
                draft.sendAt = sendAt + Int64(index)
                return draft
            }
            let ids = try await fixture.api.notifications.create(drafts) { _ in "h" }.map { try $0.get().id }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let count = try await client.consolePost("/console/queues/count", session: alice, [("kind", "scheduled")])
                #expect(count.json["count"] as? Int == 1200)
                let token = try #require(count.json["token"] as? String)
                // Sent between the count and the cancel: too late for it.
                let sent = ids[600]
                try await fixture.api.redis.send("HSET", fixture.api.keys.notification(sent), "state", DeliveryState.sent.rawValue)
                let cancel = try await client.consolePost(
                    "/console/queues/cancel", session: alice, [("token", token), ("confirm", "1200")])
                #expect(cancel.status == .ok)
                #expect(cancel.json["done"] as? Int == 1199 && cancel.json["requested"] as? Int == 1200)
                let states = try await fixture.api.redis.sendAll(
                    ids.map { RedisCommand("HGET", fixture.api.keys.notification($0), "state") }
                )
                .map(\.string)
                #expect(states.filter { $0 == DeliveryState.cancelled.rawValue }.count == 1199)
                #expect(states[600] == DeliveryState.sent.rawValue)
                let left = try #require(try await client.consoleGet("/console/queues", session: alice).json["jobs"] as? [[String: Any]])
                #expect(left.map { $0["notification"] as? String } == ["default:\(sent)"], "only the job of the one sent stays")
            }
        }
    }

    @Test func theSelectedAreCancelledAndAListPagesPastFifty() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            // 55 probes due at one time (ties across the page's end) and two scheduled sends.
            let due = JobQueue.nowMilliseconds() + 600_000
            try await fixture.api.jobQueue.enqueue(
                (0..<55).map { JobRequest(type: "probe", payload: Array("{\"n\":\($0)}".utf8), app: "news") },
                at: Array(repeating: due, count: 55))
            try await fixture.api.test { client in
                let first = try await Self.schedule(client, minutes: 120)
                let second = try await Self.schedule(client, minutes: 121)
                let bob = try await client.consoleSignIn("bob")
                let page1 = try await client.consoleGet("/console/queues", session: bob)
                #expect((page1.json["jobs"] as? [Any])?.count == 50)
                let next = try #require(page1.json["next"] as? String)
                let page2 = try await client.consoleGet("/console/queues?cursor=\(next)", session: bob)
                let rest = try #require(page2.json["jobs"] as? [[String: Any]])
                #expect(rest.count == 7)
                #expect(page2.json["next"] is NSNull)
                let payloads = Set(
                    ((page1.json["jobs"] as? [[String: Any]] ?? []) + rest).compactMap { $0["ref"] is NSNull ? $0["due"] as? Int : nil })
                #expect(payloads == [Int(due)])
                let news = try await client.consoleGet("/console/queues?app=news&kind=scheduled", session: bob)
                #expect((news.json["jobs"] as? [Any])?.count == 50 && news.json["next"] is String)
                let scheduled = try await client.consoleGet("/console/queues?kind=scheduled&from=%2B100m", session: bob)
                #expect((scheduled.json["jobs"] as? [Any])?.count == 2)
                let html = String(buffer: try await client.consoleGet("/console/queues", session: bob, html: true).body)
                #expect(
                    html.contains("Scheduled sends and retries") && !html.contains("Cancel selected") && html.contains("id=\"next-page\""))

                let alice = try await client.consoleSignIn("alice")
                let refs = rest.compactMap { $0["ref"] as? String }
                #expect(refs.count == 2)
                let cancel = try await client.consolePost("/console/queues/cancel", session: alice, [("id", refs[0])])
                #expect(cancel.status == .ok && cancel.json["done"] as? Int == 1)
                #expect(try await fixture.api.notifications.status(id: first)?.state == .cancelled)
                #expect(try await fixture.api.notifications.status(id: second)?.state == .scheduled)
                let twice = try await client.consolePost("/console/queues/cancel", session: alice, [("id", refs[0])])
                #expect(twice.json["done"] as? Int == 0, "no longer waiting")
            }
        }
    }

    @Test func refusalsAndBadInput() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let bob = try await client.consoleSignIn("bob")
                let alice = try await client.consoleSignIn("alice")
                for path in ["/console/queues/count", "/console/queues/cancel", "/console/queues/pause"] {
                    let viewer = try await client.consolePost(path, session: bob, [("app", "shop"), ("id", "q0/1/shop:1")])
                    #expect(viewer.status == .forbidden && viewer.errorCode == "console_forbidden", "\(path)")
                    let crossSite = try await client.consolePost(
                        path, session: alice, [("app", "shop")],
                        headers: [.origin: "http://evil.example", .contentType: "application/x-www-form-urlencoded"])
                    #expect(crossSite.status == .forbidden && crossSite.errorCode == "cross_site_request", "\(path)")
                    let noOrigin = try await client.consolePost(
                        path, session: alice, [("app", "shop")], headers: [.contentType: "application/x-www-form-urlencoded"])
                    #expect(noOrigin.status == .forbidden && noOrigin.errorCode == "cross_site_request", "\(path)")
                }
                for (query, code) in [
                    ("kind=soon", "bad_filter"), ("from=yesterday", "bad_filter"), ("cursor=abc", "bad_cursor"), ("app=Nope", "bad_filter"),
                    ("from=%2B2h&to=%2B1h", "bad_filter"),
                ] {
                    let response = try await client.consoleGet("/console/queues?\(query)", session: bob)
                    #expect(response.status == .badRequest && response.errorCode == code, "\(query): \(String(buffer: response.body))")
                }
                for (form, code) in [
                    ([("id", "nope")], "bad_id"), ([], "bad_selection"), ([("id", "q9/1/shop:1")], "bad_id"),
                    ([("token", "x")], "missing_confirmation"),
                ] as [([(String, String)], String)] {
                    let response = try await client.consolePost("/console/queues/cancel", session: alice, form)
                    #expect(response.status.code / 100 == 4 && response.errorCode == code, "\(form): \(String(buffer: response.body))")
                }
                let badApp = try await client.consolePost("/console/queues/pause", session: alice, [("app", "Not An App")])
                #expect(badApp.status == .badRequest && badApp.errorCode == "bad_app_id")
                let empty = try await client.consolePost("/console/queues/count", session: alice, [("kind", "scheduled")])
                #expect(empty.json["count"] as? Int == 0 && empty.json["token"] is NSNull)
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                    name: "alice", ConsoleAccess(role: .operator, apps: ["shop"]))
                let hidden = try await client.consolePost("/console/queues/pause", session: alice, [("app", "news")])
                #expect(hidden.status == .forbidden && hidden.errorCode == "console_forbidden")
                let hiddenCancel = try await client.consolePost("/console/queues/cancel", session: alice, [("id", "q0/1/news:1")])
                #expect(hiddenCancel.status == .forbidden)
            }
        }
    }

    @Test func pausingAnAppHoldsItsJobsAndTheOverviewSaysSo() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            try await queue.enqueue((0..<4).map { _ in JobRequest(type: "probe", payload: Array("{}".utf8), app: "shop") })
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let pause = try await client.consolePost("/console/queues/pause", session: alice, [("app", "shop")])
                #expect(pause.status == .ok && pause.json["changed"] as? Bool == true)
                try await queue.enqueue((0..<3).map { _ in JobRequest(type: "probe", payload: Array("{}".utf8), app: "news") })
                let taken = try await queue.take(for: "c", count: 64).map { try $0.get() }
                #expect(Set(taken.map(\.app)) == ["news"] && taken.count == 3)
                let overview = try await client.consoleGet("/console/overview.json", session: alice)
                let shop = (overview.json["apps"] as? [[String: Any]])?.first { $0["app"] as? String == "shop" }
                #expect(shop?["paused"] as? Bool == true && shop?["waiting"] as? Int == 4)
                let page = String(buffer: try await client.consoleGet("/console", session: alice, html: true).body)
                #expect(page.contains("shop · paused"))
                #expect(try await client.consoleGet("/console/queues", session: alice).json["paused"] as? [String] == ["shop"])
                let resume = try await client.consolePost("/console/queues/resume", session: alice, [("app", "shop")])
                #expect(resume.status == .ok && resume.json["changed"] as? Bool == true)
                let flowing = try await queue.take(for: "c", count: 64).map { try $0.get() }
                #expect(Set(flowing.map(\.app)) == ["shop"] && flowing.count == 4)
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                #expect(
                    entries.filter { ($0["action"] as? String)?.hasPrefix("app.") == true && $0["outcome"] as? String == "ok" }.map {
                        $0["action"] as? String
                    }
                        == ["app.resume", "app.pause"])
            }
        }
    }

    @Test func aPauseIsKeptOnTheAppsRecord() async throws {
        try await withRedisServer { server in
            var fixture = try await ConsoleFixture(server: server)
            let apps = RedisAppStore(redis: fixture.api.redis, keys: AppKeys(prefix: fixture.api.keys.prefix), ring: nil)
            fixture.api.apps = apps
            _ = try await apps.create(id: try AppID("shop"), change: AppChange(name: "Shop"))
            let queue = fixture.api.jobQueue
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                #expect(try await client.consolePost("/console/queues/pause", session: alice, [("app", "shop")]).status == .ok)
                #expect(try await apps.summary(id: try AppID("shop"))?.paused == true)
                #expect(try await client.consolePost("/console/queues/resume", session: alice, [("app", "shop")]).status == .ok)
                #expect(try await apps.summary(id: try AppID("shop"))?.paused == false)
                // An app that does not exist is not paused anywhere.
                let unknown = try await client.consolePost("/console/queues/pause", session: alice, [("app", "ghost")])
                #expect(unknown.status == .notFound && unknown.errorCode == "app_not_found")
                #expect(try await JobQueue.pausedApps(in: [queue]).isEmpty)
            }
        }
    }
}
