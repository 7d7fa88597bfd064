import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// The dead letters page and its bulk action: "all that match" acts on exactly the counted set.
@Suite("Console dead letters")
struct ConsoleDeadLetterTests {
    @Test func replayingAllThatMatchActsOnExactlyTheCountedSetEvenWhenMoreArrive() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            var ids: [String] = []
            for index in 0..<20 { ids.append(try await fixture.addDeadLetter(app: "shop", error: "APNs timeout #\(index)")) }
            let counted = ids
            for _ in 0..<10 { try await fixture.addDeadLetter(app: "news", error: "APNs timeout") }
            for _ in 0..<4 { try await fixture.addDeadLetter(app: "shop", error: "BadDeviceToken") }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let filter = [("app", "shop"), ("reason", "timeout")]
                let count = try await client.consolePost("/console/dead-letters/count", session: alice, filter)
                #expect(count.status == .ok)
                #expect(count.json["count"] as? Int == 20)
                let token = try #require(count.json["token"] as? String)
                // Between the count and the action: more that match, from the same app, with the same reason.
                var arrived: [String] = []
                for _ in 0..<7 { arrived.append(try await fixture.addDeadLetter(app: "shop", error: "APNs timeout, later")) }
                let replay = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "20")])
                #expect(replay.status == .ok)
                #expect(replay.json["done"] as? Int == 20)
                #expect(replay.json["requested"] as? Int == 20)
                #expect(Set(try await fixture.replayedOrigins()) == Set(counted), "exactly the counted ones went back into the queue")
                let left = Set(try await fixture.deadLetterIDs())
                #expect(left.isSuperset(of: arrived), "the ones that arrived after the count stay dead")
                #expect(left.count == 10 + 4 + 7)
                // Used once.
                let again = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "20")])
                #expect(again.status == .conflict)
                #expect(again.errorCode == "confirmation_unknown")
                // Audited, before and after, with the filter and the numbers.
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let replays = entries.filter { $0["action"] as? String == "dlq.replay-matching" }
                #expect(replays.map { $0["outcome"] as? String } == ["ok", "started"])
                #expect(replays.first?["done"] as? Int == 20 && replays.first?["requested"] as? Int == 20)
                #expect((replays.first?["user"] as? String) == "alice")
                #expect((replays.first?["target"] as? String)?.contains("app=shop reason~timeout") == true)
                #expect(entries.contains { $0["action"] as? String == "sign-in" && $0["user"] as? String == "alice" })
            }
        }
    }

    @Test func purgingAllThatMatchDeletesExactlyTheCountedSet() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            var ids: [String] = []
            for _ in 0..<12 { ids.append(try await fixture.addDeadLetter(app: "shop", error: "BadDeviceToken")) }
            let kept = try await fixture.addDeadLetter(app: "shop", error: "timeout")
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let count = try await client.consolePost(
                    "/console/dead-letters/count", session: alice, [("action", "purge"), ("reason", "baddevicetoken")])
                #expect(count.json["count"] as? Int == 12 && count.json["action"] as? String == "purge")
                let token = try #require(count.json["token"] as? String)
                let late = try await fixture.addDeadLetter(app: "shop", error: "BadDeviceToken, later")
                // A purge's confirmation does not replay, and is spent by the try.
                let wrongAction = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "12")])
                #expect(wrongAction.status == .conflict && wrongAction.errorCode == "confirmation_unknown")
                let again = try #require(
                    try await client.consolePost(
                        "/console/dead-letters/count", session: alice, [("action", "purge"), ("reason", "baddevicetoken")]
                    )
                    .json["token"] as? String)
                let extra = try await fixture.addDeadLetter(app: "shop", error: "BadDeviceToken, even later")
                let purge = try await client.consolePost(
                    "/console/dead-letters/purge", session: alice, [("token", again), ("confirm", "13")])
                #expect(purge.status == .ok)
                #expect(purge.json["done"] as? Int == 13)
                #expect(try await fixture.deadLetterIDs() == [kept, extra], "the counted 13 are gone; what died after stays")
                #expect(try await fixture.replayedOrigins().isEmpty, "purged, not replayed")
                _ = late
                let selected = try await client.consolePost("/console/dead-letters/purge", session: alice, [("id", "q0/\(extra)")])
                #expect(selected.json["done"] as? Int == 1)
                #expect(try await fixture.deadLetterIDs() == [kept])
                let bob = try await client.consoleSignIn("bob")
                let refused = try await client.consolePost("/console/dead-letters/purge", session: bob, [("id", "q0/\(kept)")])
                #expect(refused.status == .forbidden && refused.errorCode == "console_forbidden")
                #expect(
                    try await client.consolePost("/console/dead-letters/count", session: alice, [("action", "delete")]).errorCode
                        == "bad_action")
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                #expect(
                    entries.contains {
                        $0["action"] as? String == "dlq.purge-matching" && $0["outcome"] as? String == "ok" && $0["done"] as? Int == 13
                    })
                #expect(
                    entries.contains {
                        $0["action"] as? String == "dlq.purge-selected" && $0["outcome"] as? String == "ok" && $0["done"] as? Int == 1
                    })
            }
        }
    }

    @Test func theConfirmedNumberMustBeTheCountedOne() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            for _ in 0..<3 { try await fixture.addDeadLetter(app: "shop", error: "timeout") }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let token = try #require(
                    try await client.consolePost("/console/dead-letters/count", session: alice, [("app", "shop")]).json["token"] as? String)
                let wrong = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "4")])
                #expect(wrong.status == .conflict)
                #expect(wrong.errorCode == "confirmation_mismatch")
                #expect(try await fixture.deadLetterIDs().count == 3)
                let missing = try await client.consolePost("/console/dead-letters/replay", session: alice, [("token", token)])
                #expect(missing.status == .badRequest)
                #expect(missing.errorCode == "missing_confirmation")
                // Another user cannot use alice's confirmation.
                let second = try #require(
                    try await client.consolePost("/console/dead-letters/count", session: alice, [("app", "shop")]).json["token"] as? String)
                let root = try await client.consoleSignIn("root")
                let stolen = try await client.consolePost(
                    "/console/dead-letters/replay", session: root, [("token", second), ("confirm", "3")])
                #expect(stolen.status == .conflict)
                #expect(try await fixture.deadLetterIDs().count == 3)
                let none = try await client.consolePost("/console/dead-letters/count", session: alice, [("app", "nothing-here")])
                #expect(none.json["count"] as? Int == 0)
                #expect(none.json["token"] is NSNull)
                // The browser's way: the count page names the number and asks for it.
                let page = try await client.consolePost(
                    "/console/dead-letters/count", session: alice, [("app", "shop")], headers: ConsoleFixture.browser)
                let html = String(buffer: page.body)
                #expect(html.contains("<strong id=\"match-count\">3</strong>") && html.contains("Type 3 to confirm"))
            }
        }
    }

    @Test func replayingTheSelectedOnesIsAuditedAndBounded() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let ids = [
                try await fixture.addDeadLetter(app: "shop", error: "a"), try await fixture.addDeadLetter(app: "shop", error: "b"),
                try await fixture.addDeadLetter(app: "news", error: "c"),
            ]
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let listed = try #require(
                    try await client.consoleGet("/console/dead-letters?app=shop", session: alice).json["deadLetters"] as? [[String: Any]])
                #expect(listed.compactMap { $0["ref"] as? String } == ["q0/\(ids[1])", "q0/\(ids[0])"], "newest first, shop only")
                let replay = try await client.consolePost(
                    "/console/dead-letters/replay", session: alice,
                    [("id", "q0/\(ids[0])"), ("id", "q0/\(ids[2])"), ("id", "q0/\(ids[0])")])
                #expect(replay.json["done"] as? Int == 2)
                #expect(Set(try await fixture.replayedOrigins()) == [ids[0], ids[2]])
                #expect(try await fixture.deadLetterIDs() == [ids[1]])
                for bad in [
                    [("id", "q9/1-0")], [("id", "q0/../x")], [] as [(String, String)], Array(repeating: ("id", "q0/1-0"), count: 501),
                ] {
                    let response = try await client.consolePost("/console/dead-letters/replay", session: alice, bad)
                    #expect(response.status == .badRequest, "\(bad.prefix(1))")
                    #expect(response.errorCode != nil)
                }
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let done = try #require(
                    entries.first { $0["action"] as? String == "dlq.replay-selected" && $0["outcome"] as? String == "ok" })
                #expect(done["requested"] as? Int == 2 && done["done"] as? Int == 2)
                #expect((done["target"] as? String)?.contains(ids[2]) == true)
                let html = String(buffer: try await client.consoleGet("/console/audit", session: root, html: true).body)
                #expect(html.contains("dlq.replay-selected"))
            }
        }
    }

    @Test func anOperatorOfSomeAppsSeesAndActsOnThoseOnly() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(
                name: "alice", ConsoleAccess(role: .operator, apps: ["news"]))
            let shop = try await fixture.addDeadLetter(app: "shop", error: "timeout")
            for _ in 0..<2 { try await fixture.addDeadLetter(app: "news", error: "timeout") }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let listed = try #require(
                    try await client.consoleGet("/console/dead-letters", session: alice).json["deadLetters"] as? [[String: Any]])
                #expect(listed.count == 2 && listed.allSatisfy { $0["app"] as? String == "news" })
                #expect(try await client.consoleGet("/console/dead-letters?app=shop", session: alice).status == .forbidden)
                let all = try await client.consolePost("/console/dead-letters/count", session: alice, [])
                #expect(all.json["count"] as? Int == 2, "all means all of her apps")
                let selected = try await client.consolePost("/console/dead-letters/replay", session: alice, [("id", "q0/\(shop)")])
                #expect(selected.status == .forbidden)
                let token = try #require(all.json["token"] as? String)
                #expect(
                    try await client.consolePost("/console/dead-letters/replay", session: alice, [("token", token), ("confirm", "2")]).json[
                        "done"] as? Int == 2)
                #expect(try await fixture.deadLetterIDs() == [shop])
            }
        }
    }

    @Test func badFiltersAndFormsAre4xxNamingTheProblem() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let cases: [([(String, String)], String)] = [
                    ([("app", "Not An App")], "bad_filter"), ([("from", "yesterday")], "bad_filter"),
                    ([("from", "-1h"), ("to", "-2h")], "bad_filter"),
                    ([("text", String(repeating: "x", count: 201))], "bad_filter"),
                    ([("reason", String(repeating: "x", count: 300))], "field_too_long"),
                ]
                for (pairs, code) in cases {
                    let response = try await client.consolePost("/console/dead-letters/count", session: alice, pairs)
                    #expect(response.status == .badRequest, "\(pairs.map(\.0))")
                    #expect(response.errorCode == code, "\(pairs.map(\.0)): \(response.errorMessage)")
                }
                let json = try await client.execute(
                    uri: "/console/dead-letters/count", method: .post,
                    headers: alice + [.origin: ConsoleFixture.origin, .contentType: "application/json"], body: .init(string: "{}"))
                #expect(json.status == .unsupportedMediaType)
                let huge = try await client.execute(
                    uri: "/console/dead-letters/count", method: .post, headers: alice + ConsoleFixture.script,
                    body: .init(string: String(repeating: "a=b&", count: 10_000)))
                #expect(huge.status == .contentTooLarge || huge.status == .badRequest)
                let list = try await client.consoleGet("/console/dead-letters?from=-1h&reason=%3Cscript%3E", session: alice, html: true)
                #expect(list.status == .ok)
                #expect(
                    String(buffer: list.body).contains("&lt;script&gt;") && !String(buffer: list.body).contains("<script>"),
                    "every value is escaped")
            }
        }
    }
}
