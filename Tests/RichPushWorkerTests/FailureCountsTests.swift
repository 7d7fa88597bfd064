import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import Synchronization
import Testing

@testable import RichPushWorker

/// The failed pushes by reason per app, counted by the worker into its partition of a real Redis
/// and read back by the queue's per-app stats (what the console's overview shows): exact counts,
/// bounded codes, and nothing more written for a batch without a failure.
@Suite("Failed pushes by reason")
struct FailureCountsTests {
    static let devices = (0..<6).map {
        Installation(id: "i\($0)", platform: .apns, handle: "h\($0)", tags: ["news"], owner: "alice", updatedAt: 1_000)
    }

    /// A handler of `app` on the in-memory ledger and registry whose adapter answers `outcome`,
    /// counting failures into `queue` (the only thing here that talks to Redis).
    static func handler(
        app: AppID, queue: JobQueue, notifications: InMemoryNotifications,
        outcome: @escaping @Sendable (OutgoingPush) -> PushOutcome
    ) -> RichPushJobHandler {
        let installations = InMemoryInstallationStore(devices)
        let base = RichPushJobHandler(
            ledger: notifications, installations: installations, queue: InMemoryJobQueue(),
            adapter: InMemoryPushAdapter(outcome: outcome), renderer: PushRenderer(), failedPushes: queue)
        return app.isDefault ? base : base.scoped(to: app, ledger: notifications, installations: installations, adapter: base.adapter)
    }

    static func run(_ handler: RichPushJobHandler, app: AppID, notifications: InMemoryNotifications) async throws {
        let id = try await notifications.create(
            NotificationDraft(
                message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                creator: "alice", target: "news"), hashing: { _ in "hash" }
        ).id
        let request = RichPushJob.request(notification: id, app: app)
        _ = await handler.handle(batch: [Job(id: "1-0", type: request.type, payload: request.payload, enqueuedAt: 0, app: request.app)])
    }

    @Test func eachAppsFailuresAreCountedByReasonInItsPartition() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: String(uniqueKeyPrefix("fails").dropLast())))
            let notifications = InMemoryNotifications()
            // shop: 2 dead tokens, 1 payload refused for good, 1 service unavailable (retried), 2 sent.
            let shop = Self.handler(app: AppID(unchecked: "shop"), queue: queue, notifications: notifications) { push in
                switch push.installation.id {
                case "i0", "i1": .invalidToken(reason: "BadDeviceToken")
                case "i2": .failed(reason: "never sent: PayloadTooLarge: the payload is 5000 bytes", retryable: false)
                case "i3": .failedRetryAfter(reason: "ServiceUnavailable", after: .seconds(1))
                default: .sent(adapterID: "x")
                }
            }
            // The default app: every push answered by a push service's 410, and one never answered.
            let main = Self.handler(app: .default, queue: queue, notifications: notifications) { push in
                push.installation.id == "i5"
                    ? .failed(reason: "no answer within the request timeout", retryable: true)
                    : .invalidToken(reason: "the push service answered 410: the subscription expired or was removed")
            }
            // Twice: the dead tokens' devices are removed by the first, so the second sends 4 pushes.
            try await Self.run(shop, app: AppID(unchecked: "shop"), notifications: notifications)
            try await Self.run(shop, app: AppID(unchecked: "shop"), notifications: notifications)
            try await Self.run(main, app: .default, notifications: notifications)
            // The apps busy (a job waiting each), so the per-app stats report them.
            try await queue.enqueue([
                JobRequest(type: "probe", payload: [1], app: "shop"), JobRequest(type: "probe", payload: [1], app: "default"),
            ])
            let apps = try await queue.stats(perApp: true).apps
            #expect(apps["shop"]?.failedByReason == ["BadDeviceToken": 2, "PayloadTooLarge": 2, "ServiceUnavailable": 2])
            #expect(apps["default"]?.failedByReason == ["http_410": 5, "timeout": 1])
            // Two partitions' totals add up by code.
            let both = try #require(apps["shop"]).adding(AppQueueStats(failedByReason: ["BadDeviceToken": 1, "other": 3]))
            #expect(both.failedByReason == ["BadDeviceToken": 3, "PayloadTooLarge": 2, "ServiceUnavailable": 2, "other": 3])
            await redis.close()
        }
    }

    /// One app names at most 32 codes in a partition; the 33rd, and any code that is not one
    /// (an old or a buggy worker's), count as `other`, whatever the worker sends.
    @Test func theCodesOfAnAppAreBoundedInRedis() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let configuration = JobQueueConfiguration(prefix: String(uniqueKeyPrefix("fails").dropLast()))
            let queue = JobQueue(redis: redis, configuration: configuration)
            let first = Dictionary(uniqueKeysWithValues: (0..<JobQueue.failureCodesPerApp).map { ("code\($0)", 1) })
            try await queue.countFailedPushes(first, app: "shop")
            try await queue.countFailedPushes(
                ["code33": 2, "code0": 1, "<b>x</b>": 4, String(repeating: "A", count: 49): 1, "ok": 0], app: "shop")
            let flat = try await redis.send("HGETALL", configuration.failuresKey(app: "shop")).array ?? []
            var totals: [String: Int] = [:]
            for index in stride(from: 0, to: flat.count, by: 2) { totals[flat[index].string ?? "?"] = Int(flat[index + 1].string ?? "") }
            #expect(totals.count == JobQueue.failureCodesPerApp + 1, "\(totals.keys.sorted())")
            #expect(totals["code0"] == 2 && totals["code31"] == 1)
            #expect(totals["other"] == 2 + 4 + 1, "the 33rd code, a tag and a code too long")
            #expect(totals["code33"] == nil && totals["ok"] == nil)
            // Another app has a bound of its own.
            try await queue.countFailedPushes(["code33": 1], app: "news")
            #expect(try await redis.send("HGET", configuration.failuresKey(app: "news"), "code33").string == "1")
            await redis.close()
        }
    }

    /// A counter that always fails, as Redis does when it is away.
    final class Unwritable: FailedPushCounting {
        struct Refused: Error {}
        let tried = Mutex(0)
        func countFailedPushes(_ counts: [String: Int], app: String) async throws {
            tried.withLock { $0 += 1 }
            throw Refused()
        }
    }

    /// The counts are statistics: a write that fails leaves the batch's own outcome as it was (a
    /// push failed for good is done with, not retried to count it again).
    @Test func aLostCountDoesNotFailTheBatch() async throws {
        let notifications = InMemoryNotifications()
        let counter = Unwritable()
        let handler = RichPushJobHandler(
            ledger: notifications, installations: InMemoryInstallationStore(Self.devices), queue: InMemoryJobQueue(),
            adapter: InMemoryPushAdapter { _ in .failed(reason: "MissingTopic", retryable: false) },
            renderer: PushRenderer(), failedPushes: counter)
        let id = try await notifications.create(
            NotificationDraft(
                message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                creator: "alice", target: "news"), hashing: { _ in "hash" }
        ).id
        let request = RichPushJob.request(notification: id)
        let results = await handler.handle(batch: [
            Job(id: "1-0", type: request.type, payload: request.payload, enqueuedAt: 0, app: request.app)
        ])
        #expect(counter.tried.withLock { $0 } == 1)
        guard case .success = results[0] else { Issue.record("the batch failed: \(results)"); return }
        #expect(try await notifications.status(id: id)?.counts["failed"] == 6)
    }

    /// A batch whose pushes all went costs Redis no command for the counts; one with failures
    /// costs one script call, however many pushes failed.
    @Test func aBatchWithoutFailuresWritesNothingMore() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: String(uniqueKeyPrefix("fails").dropLast())))
            let notifications = InMemoryNotifications()
            let fine = Self.handler(app: .default, queue: queue, notifications: notifications) { _ in .sent(adapterID: "x") }
            // Failed for good without removing the devices, so each batch has 6 failures.
            let failing = Self.handler(app: .default, queue: queue, notifications: notifications) { _ in
                .failed(reason: "MissingTopic", retryable: false)
            }
            // The script loaded once, so the batch below is one EVALSHA and no NOSCRIPT retry.
            try await Self.run(failing, app: .default, notifications: notifications)
            _ = try await server.probe("CONFIG", "RESETSTAT")
            try await Self.run(fine, app: .default, notifications: notifications)
            let stats = try await server.probe("INFO", "commandstats").string ?? ""
            // The only commands since the reset are the probe's own INFO (and its connection's).
            #expect(try await server.commandCalls("evalsha") == 0 && !stats.contains("cmdstat_hincrby"), "\(stats)")
            try await Self.run(failing, app: .default, notifications: notifications)
            #expect(try await server.commandCalls("evalsha") == 1, "one script call for 6 failed pushes")
            await redis.close()
        }
    }
}
