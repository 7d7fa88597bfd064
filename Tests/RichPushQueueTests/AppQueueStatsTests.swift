import Hiredis
import RedisTestSupport
import Testing

@testable import RichPushQueue

/// Per-app (per-scope) queue numbers under fair scheduling, read on a real Redis as
/// `richpush stats` and the worker's gauges read them.
@Suite("Per-scope queue numbers")
struct ScopeStatsTests {

    /// Admits `requests` into `queue` as if they had been enqueued at `enqueuedAt` (ms).
    func admit(_ requests: [JobRequest], to queue: JobQueue, enqueuedAt: Int64, redis: any RedisClient) async throws {
        for request in requests {
            try await redis.run(
                QueueScripts.enqueue,
                QueueScripts.EnqueueCall(
                    admission: QueueScripts.Admission(queue.configuration), key: "", time: 0,
                    fields: Job.fields(for: request, now: enqueuedAt)))
        }
    }

    @Test func waitingInFlightOldestAndTotalsByScope() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let queue = fixture.queue
            try await queue.ensureGroup()
            try await JobQueue.setLimits(AppShare(weight: 3, maxInFlight: 2), of: "a", in: [queue])
            let now = JobQueue.nowMilliseconds()
            // a: 3 single-device jobs enqueued 5 s ago, 4 bulk ones 9 s ago; b: 2 now, enqueued 1 s ago.
            try await admit(fixture.jobs("a", 3), to: queue, enqueuedAt: now - 5_000, redis: fixture.redis)
            try await admit(fixture.jobs("a", 4, lane: .bulk), to: queue, enqueuedAt: now - 9_000, redis: fixture.redis)
            try await admit(fixture.jobs("b", 2), to: queue, enqueuedAt: now - 1_000, redis: fixture.redis)

            var apps = try await queue.stats(perApp: true).apps
            #expect(Set(apps.keys) == ["a", "b"])
            let a = try #require(apps["a"])
            #expect(a.waitingNow == 3 && a.waitingBulk == 4 && a.inFlight == 0 && a.taken == 0 && a.done == 0)
            #expect(a.weight == 3 && a.maxInFlight == 2)
            #expect((9_000..<60_000).contains(a.oldestWaitingAgeMilliseconds), "\(a)")
            let b = try #require(apps["b"])
            #expect(b.waitingNow == 2 && b.waitingBulk == 0 && b.weight == 1 && b.maxInFlight == nil)
            #expect((1_000..<60_000).contains(b.oldestWaitingAgeMilliseconds), "\(b)")
            // Without asking, the stats read nothing per app.
            #expect(try await queue.stats().apps.isEmpty)

            // A take: a is capped at 2 in flight (its `now` lane first), b gives both of its.
            let taken = try await queue.take(for: "c", count: 10).map { try $0.get() }
            #expect(taken.filter { $0.app == "a" }.count == 2 && taken.filter { $0.app == "b" }.count == 2)
            apps = try await queue.stats(perApp: true).apps
            #expect(apps["a"]?.waitingNow == 1 && apps["a"]?.waitingBulk == 4 && apps["a"]?.inFlight == 2 && apps["a"]?.taken == 2)
            #expect(apps["b"]?.waiting == 0 && apps["b"]?.inFlight == 2 && apps["b"]?.oldestWaitingAgeMilliseconds == 0)

            // Settled: b has nothing waiting nor in flight and leaves the numbers; a's done counts.
            try await queue.acknowledge(taken.map { ($0.id, $0.inFlightApp) })
            apps = try await queue.stats(perApp: true).apps
            #expect(Set(apps.keys) == ["a"])
            #expect(apps["a"]?.inFlight == 0 && apps["a"]?.done == 2 && apps["a"]?.taken == 2)
        }
    }

    @Test func totalsOverPartitionsCountWhereAScopeIsIdle() async throws {
        try await withRedisServer { server in
            let first = QueueFixture(server: server)
            let prefix = first.queue.configuration.prefix
            let second = JobQueue(redis: first.redis, configuration: JobQueueConfiguration(prefix: prefix, partition: "q1"))
            let queues = [first.queue, second]
            for queue in queues { try await queue.ensureGroup() }
            try await JobQueue.setLimits(AppShare(weight: 2, maxInFlight: 7), of: "a", in: queues)
            // In q1, a ran 3 jobs to the end; in q0 it has 5 waiting.
            try await second.enqueue(first.jobs("a", 3))
            let done = try await second.take(for: "c", count: 3).map { try $0.get() }
            try await second.acknowledge(done.map { ($0.id, $0.inFlightApp) })
            try await first.queue.enqueue(first.jobs("a", 5, lane: .bulk))

            let partitions = try await JobQueue.appStats(in: queues)
            #expect(partitions[0]["a"]?.waitingBulk == 5 && partitions[1]["a"] == nil)
            let total = try await QueueStats.read(queues, perApp: true).apps
            #expect(
                total["a"]
                    == AppQueueStats(
                        waitingBulk: 5, oldestWaitingAgeMilliseconds: total["a"]?.oldestWaitingAgeMilliseconds ?? -1,
                        taken: 3, done: 3, weight: 2, maxInFlight: 7))
        }
    }

    /// The pushes a job's run got accepted are added to its app's `sent` when the job is
    /// acknowledged or sent back to retry, once (an ack that acknowledges nothing adds nothing).
    @Test func acceptedPushesAddUpAsTheAppsSentTotal() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.retry = RetryPolicy(maxAttempts: 3, base: .seconds(60), cap: .seconds(60)) }
            let queue = fixture.queue
            try await queue.ensureGroup()
            try await queue.enqueue(fixture.jobs("a", 4))
            try await queue.enqueue(fixture.jobs("b", 1))
            let jobs = try await queue.take(for: "c", count: 5).map { try $0.get() }
            let a = jobs.filter { $0.app == "a" }, b = jobs.filter { $0.app == "b" }
            try #require(a.count == 4 && b.count == 1)
            try await queue.acknowledge(accepted: [
                (a[0].id, a[0].inFlightApp, 5), (a[1].id, a[1].inFlightApp, 2), (b[0].id, b[0].inFlightApp, 9),
            ])
            // Acknowledged again (a reclaimed job finished twice): not counted again.
            try await queue.acknowledge(accepted: [(a[0].id, a[0].inFlightApp, 5)])
            try await queue.retry(a[2], after: .seconds(60), error: "3 pushes failed", accepted: 4)
            try await queue.deadLetter(id: a[3].id, error: "for good")
            // Read as the overview reads them (the scopes asked for by name: neither is busy now).
            let reply = try await fixture.redis.run(QueueScripts.appStats, queue.appStatsCall(also: ["a", "b"]))
            let apps = JobQueue.appStats(from: reply, now: JobQueue.nowMilliseconds())
            #expect(apps["a"]?.sent == 11 && apps["b"]?.sent == 9, "\(apps)")
            let numbers = try await fixture.redis.send("HMGET", queue.configuration.schedulerKey, "s:a", "s:b").array?.map(\.string)
            #expect(numbers == ["11", "9"])
        }
    }

    @Test func theBusiestScopesAreShownFirstAndTheRestCounted() {
        let scopes = [
            "quiet": AppQueueStats(waitingNow: 1), "busy": AppQueueStats(waitingBulk: 50, inFlight: 10), "mid": AppQueueStats(inFlight: 5),
            "tie": AppQueueStats(inFlight: 5),
        ]
        let (shown, more) = AppQueueStats.busiest(scopes, limit: 3)
        #expect(shown.map(\.app) == ["busy", "mid", "tie"] && more == 1)
    }

    @Test func labelsAreBoundedAndStable() {
        let labels = AppLabels(limit: 2)
        #expect(labels.label("a") == "a" && labels.label("b") == "b")
        #expect(labels.label("c") == AppLabels.other)
        #expect(labels.label("a") == "a" && labels.names == ["a", "b"])
        let byLabel = AppQueueGauges.byLabel(
            [
                "a": AppQueueStats(waitingNow: 1), "c": AppQueueStats(waitingNow: 2, oldestWaitingAgeMilliseconds: 50),
                "d": AppQueueStats(oldestWaitingAgeMilliseconds: 70, inFlight: 3),
            ], labels: labels)
        #expect(byLabel["a"]?.waiting == 1)
        #expect(byLabel[AppLabels.other] == AppQueueStats(waitingNow: 2, oldestWaitingAgeMilliseconds: 70, inFlight: 3))
    }
}
