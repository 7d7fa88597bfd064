import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushQueue
import Testing

/// "Retry now" on the queues page: the counted retries, and only they, are made due at once; a
/// selection too; a viewer cannot.
@Suite("Console retry now")
struct ConsoleRetryNowTests {
    /// `count` jobs of `app` taken and sent back to retry in 10 minutes, failing on `platforms`.
    static func retries(_ queue: JobQueue, app: String, count: Int, platforms: [String] = []) async throws -> [Job] {
        try await queue.enqueue((0..<count).map { _ in JobRequest(type: "probe", payload: [1], app: app) })
        let jobs = try await queue.take(for: "w", count: count).map { try $0.get() }
        for job in jobs { try await queue.retry(job, after: .seconds(600), error: "UNAVAILABLE", platforms: platforms) }
        return jobs
    }

    /// The delayed jobs due by now.
    static func dueNow(_ queue: JobQueue) async throws -> [DelayedJob] {
        try await queue.delayedJobs(from: 0, count: 1000).filter { $0.due <= JobQueue.nowMilliseconds() }
    }

    @Test func retryingAllThatMatchMovesExactlyTheCountedOnes() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            let counted = try await Self.retries(queue, app: "shop", count: 4, platforms: ["fcm"])
            _ = try await Self.retries(queue, app: "shop", count: 2, platforms: ["apns"])
            _ = try await Self.retries(queue, app: "news", count: 3, platforms: ["fcm"])
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let filter = [("app", "shop"), ("platform", "fcm")]
                let count = try await client.consolePost("/console/queues/retries/count", session: alice, filter)
                #expect(count.status == .ok)
                #expect(count.json["count"] as? Int == 4)
                let token = try #require(count.json["token"] as? String)
                // 3 more that match arrive: the count of 4 no longer holds, so 7 is refused by it,
                // and a new count says 7.
                let later = try await Self.retries(queue, app: "shop", count: 3, platforms: ["fcm"])
                let wrong = try await client.consolePost(
                    "/console/queues/retries/retry", session: alice, [("token", token), ("confirm", "7")])
                #expect(wrong.status == .conflict && wrong.errorCode == "confirmation_mismatch")
                let again = try #require(
                    try await client.consolePost("/console/queues/retries/count", session: alice, filter).json["token"] as? String)
                #expect(
                    try await client.consolePost("/console/queues/retries/retry", session: alice, [("token", again), ("confirm", "7")])
                        .status == .ok)
                #expect(try await queue.delayedJobs(from: 0, count: 1000).count == 12)
                // The 7 of the second count moved: shop's on fcm, not its apns ones nor news'.
                let moved = try await Self.dueNow(queue)
                #expect(Set(moved.compactMap(\.job?.origin)) == Set((counted + later).map(\.origin)))
                // A due retry is admitted by the next promotion, into its app's lane.
                #expect(try await queue.promoteDueRetries() == 7)
                #expect(try await Self.dueNow(queue).isEmpty)
                // Used once.
                let reuse = try await client.consolePost(
                    "/console/queues/retries/retry", session: alice, [("token", again), ("confirm", "7")])
                #expect(reuse.status == .conflict && reuse.errorCode == "confirmation_unknown")
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let retried = entries.first { $0["action"] as? String == "retry.now-matching" && $0["outcome"] as? String == "ok" }
                #expect(retried?["done"] as? Int == 7)
                #expect((retried?["target"] as? String)?.contains("platform=fcm") == true)
            }
        }
    }

    @Test func onlyTheCountedRetriesMoveWhenMoreArriveBeforeTheConfirmation() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            let counted = try await Self.retries(queue, app: "shop", count: 5)
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let token = try #require(
                    try await client.consolePost("/console/queues/retries/count", session: alice, [("app", "shop")]).json["token"]
                        as? String)
                let later = try await Self.retries(queue, app: "shop", count: 2)
                let done = try await client.consolePost(
                    "/console/queues/retries/retry", session: alice, [("token", token), ("confirm", "5")])
                #expect(done.json["done"] as? Int == 5 && done.json["requested"] as? Int == 5)
                #expect(Set(try await Self.dueNow(queue).compactMap(\.job?.origin)) == Set(counted.map(\.origin)))
                let waiting = try await queue.delayedJobs(from: JobQueue.nowMilliseconds() + 60_000, count: 100)
                #expect(
                    Set(waiting.compactMap(\.job?.origin)) == Set(later.map(\.origin)), "those failed after the count keep their back-off")
            }
        }
    }

    @Test func aSelectionMovesThoseAndAViewerCannot() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            _ = try await Self.retries(queue, app: "shop", count: 3)
            let delayed = try await queue.delayedJobs(from: 0, count: 10)
            let partition = queue.configuration.partition
            let chosen = try #require(delayed.first)
            let reference = "\(partition)/\(chosen.due)/\(try #require(chosen.job?.origin))"
            try await fixture.api.test { client in
                let bob = try await client.consoleSignIn("bob")
                let refused = try await client.consolePost("/console/queues/retries/retry", session: bob, [("id", reference)])
                #expect(refused.status == .forbidden)
                let alice = try await client.consoleSignIn("alice")
                let page = String(buffer: try await client.consoleGet("/console/queues?kind=retry", session: alice, html: true).body)
                #expect(page.contains(#"form="retries-selected""#) && page.contains("Retry all retries that match now"))
                let done = try await client.consolePost("/console/queues/retries/retry", session: alice, [("id", reference)])
                #expect(done.status == .ok && done.json["done"] as? Int == 1)
                #expect(try await Self.dueNow(queue).compactMap(\.job?.origin) == [chosen.job?.origin])
                // Moved already: a second time moves nothing (it is due; its score stays).
                for bad in [
                    "q9/1/1-0", "\(partition)/x/1-0", "\(partition)/1/not/an id", "\(partition)/1/" + String(repeating: "9", count: 65),
                ] {
                    let response = try await client.consolePost("/console/queues/retries/retry", session: alice, [("id", bad)])
                    #expect(response.status == .badRequest && response.errorCode == "bad_id", "\(bad)")
                }
                #expect(try await client.consolePost("/console/queues/retries/retry", session: alice, []).errorCode == "bad_selection")
            }
        }
    }
}
