import Foundation
import Hiredis
import RedisTestSupport
import RichPushBench
import Synchronization
import Testing

@testable import RichPushQueue

/// A job's life through an in-process worker: retry, dead letters, replay, idempotency, poison.
@Suite("Job lifecycle with in-process workers")
struct LifecycleTests {
    @Test func retryThenSuccess() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.enqueue(fixture.probe("flaky", failTimes: 2))
            try await fixture.withWorkers([fixture.worker()]) {
                try await waitUntil(timeout: .seconds(60), "the job to succeed") { try await fixture.handledCounts()["flaky"] == 1 }
            }
            let stats = try await fixture.queue.stats()
            #expect(stats.retried == 2 && stats.processed == 1 && stats.deadLetters == 0 && stats.pending == 0 && stats.delayed == 0)
        }
    }

    @Test func exhaustionDeadLettersThenReplaySucceeds() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) {
                $0.retry = RetryPolicy(maxAttempts: 3, base: .milliseconds(5), cap: .milliseconds(20))
            }
            let healthy = Switch()
            var handlers = JobHandlers()
            handlers.register(ToggleHandler(healthy: healthy, redis: fixture.redis, key: fixture.recordKey), for: "toggle")
            let id = try await fixture.queue.enqueue(JobRequest(type: "toggle", payload: Array("order-7".utf8)))
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil(timeout: .seconds(60), "the job to be dead-lettered") { try await fixture.queue.deadLetterCount() == 1 }
                let letter = try #require(try await fixture.queue.deadLetters().first)
                #expect(letter.origin == id)
                #expect(letter.error.contains("gave up after 3 attempts") && letter.error.contains("downstream unavailable"))
                #expect(letter.job?.payload == Array("order-7".utf8))
                #expect(try await fixture.queue.stats().retried == 2)

                healthy.on.store(true, ordering: .relaxed)
                #expect(try await fixture.queue.replayDeadLetters(ids: [letter.id]) == 1)
                try await waitUntil(timeout: .seconds(60), "the replayed job to succeed") {
                    try await fixture.handledCounts()["order-7"] == 1
                }
            }
            #expect(try await fixture.queue.deadLetterCount() == 0)
        }
    }

    /// A deferral is not a failure: deferred more often than the retry policy allows attempts,
    /// the job still runs, with its attempts untouched.
    @Test func deferralsSpendNoAttempts() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) {
                $0.retry = RetryPolicy(maxAttempts: 2, base: .milliseconds(5), cap: .milliseconds(20))
            }
            var handlers = JobHandlers()
            let deferrals = Tally()
            handlers.register(
                DeferringHandler(times: 5, deferrals: deferrals, redis: fixture.redis, key: fixture.recordKey), for: "deferring")
            try await fixture.queue.enqueue(JobRequest(type: "deferring", payload: Array("later".utf8)))
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                // Six runs one after another, each a take, a wait for the bell and a promotion: a
                // second or more apiece while the whole suite shares the cooperative pool.
                try await waitUntil(timeout: .seconds(60), "the job to run after its deferrals") {
                    try await fixture.handledCounts()["later"] == 1
                }
            }
            #expect(deferrals.count.load(ordering: .relaxed) == 5)
            #expect(try await fixture.queue.deadLetterCount() == 0)
        }
    }

    /// A handler that counts attempts itself (per push, ``JobError/attempts``) decides when the
    /// job has spent them: failing more often than the policy allows, but each time saying it
    /// spent fewer, the job runs on; the count it gives is kept as the job's attempt; when it
    /// says the limit is reached, the job is dead-lettered.
    @Test func aHandlersOwnAttemptCountDecidesTheRetries() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) {
                $0.retry = RetryPolicy(maxAttempts: 3, base: .milliseconds(5), cap: .milliseconds(20))
            }
            var handlers = JobHandlers()
            let runs = Tally()
            let seen = Seen()
            handlers.register(CountingHandler(runs: runs, seen: seen), for: "counting")
            try await fixture.queue.enqueue(JobRequest(type: "counting", payload: Array("x".utf8)))
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil(timeout: .seconds(60), "the job to be dead-lettered by its own count") {
                    try await fixture.queue.deadLetterCount() == 1
                }
            }
            // Runs 1-4 said "1 spent" (a job count would have stopped after 3); runs 5-6 said 2
            // and 3, and 3 is the limit.
            #expect(runs.count.load(ordering: .relaxed) == 6)
            #expect(seen.values.withLock { $0 } == [0, 1, 1, 1, 1, 2], "the attempt kept with the job is the handler's count")
            #expect(try await fixture.queue.deadLetters().first?.error.hasPrefix("gave up after 3 attempts") == true)
        }
    }

    @Test func permanentErrorsAreNeverRetried() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.enqueue(fixture.probe("bad-token", permanent: true))
            try await fixture.withWorkers([fixture.worker()]) {
                try await waitUntil("the dead letter") { try await fixture.queue.deadLetterCount() == 1 }
            }
            let stats = try await fixture.queue.stats()
            #expect(stats.retried == 0 && stats.deadLettered == 1)
            #expect(try await fixture.queue.deadLetters().first?.error == "probe asked to fail permanently")
        }
    }

    @Test func undecodableEntryIsDeadLetteredAndTheLoopGoesOn() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.redis.send("XADD", fixture.queue.configuration.streamKey, "*", "v", "1", "garbage", "yes")
            try await fixture.queue.enqueue(fixture.probe("after-poison"))
            try await fixture.withWorkers([fixture.worker()]) {
                try await waitUntil("the good job") { try await fixture.handledCounts()["after-poison"] == 1 }
                try await waitUntil("the dead letter") { try await fixture.queue.deadLetterCount() == 1 }
            }
            let letter = try #require(try await fixture.queue.deadLetters().first)
            #expect(letter.error.contains("missing job type"))
            #expect(letter.job == nil)
        }
    }

    @Test func jobDeliveredTooOftenIsAPoisonPill() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) {
                $0.maxDeliveries = 2
                $0.visibilityTimeout = .milliseconds(100)
                $0.scheduling = .fifo  // read by hand below
            }
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.probe("crasher"))
            // Two consumers take the job and die without acknowledging it (as a crashing handler would).
            let reader = RedisConnection(configuration: server.configuration)
            _ = try await fixture.queue.read(on: reader, consumer: "doomed-1", count: 1, block: .milliseconds(10))
            try await waitUntil("the lease to lapse") {
                try await fixture.queue.reclaim(for: "doomed-2").jobs.count == 1
            }
            await reader.close()
            // Delivered twice: the next reclaim, a worker's, finds a poison message and dead-letters
            // it as a job that failed for good, its handler told first.
            let handler = HookRecorder()
            var handlers = JobHandlers()
            handlers.register(handler, for: ProbeJobHandler.type)
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil("the dead letter") { try await fixture.queue.deadLetterCount() == 1 }
            }
            let letter = try #require(try await fixture.queue.deadLetters().first)
            #expect(letter.error.contains("delivered 2 times"))
            #expect(handler.calls.map { $0.map(\.reason) } == [[letter.error]])
            #expect(handler.runs == 0)
            #expect(try await fixture.queue.stats().pending == 0)
            #expect(try await fixture.handledCounts()["crasher"] == nil)
        }
    }

    @Test func idempotentEnqueueAddsOnce() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            var request = fixture.probe("once")
            request.idempotencyKey = "order-42"
            let first = try await fixture.queue.enqueue(request)
            let second = try await fixture.queue.enqueue(request)
            let batch = try await fixture.queue.enqueue([request, fixture.probe("other")])
            #expect(first == second && batch[0] == first && batch[1] != first)
            // Fair scheduling: both wait in their lane until a worker takes them.
            #expect(try await fixture.queue.stats().waiting == 2)
        }
    }

    @Test func replayOfATimeWindowResendsExactlyThatWindow() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.scheduling = .fifo }  // stream ids and reads by hand
            let before = try await fixture.queue.enqueue(fixture.probe("before"))
            let ids = try await fixture.queue.enqueue((0..<3).map { fixture.probe("in-\($0)") })
            let after = try await fixture.queue.enqueue(fixture.probe("after"))
            try await fixture.withWorkers([fixture.worker()]) {
                try await waitUntil("first run") { try await fixture.handledCounts().count == 5 }
                let dry = try await fixture.queue.replay(from: ids[0], to: ids[2], dryRun: true)
                #expect(dry.candidates.map(\.id) == ids)
                #expect(try await fixture.handledCounts().values.allSatisfy { $0 == 1 })
                let done = try await fixture.queue.replay(from: ids[0], to: ids[2])
                #expect(done.candidates.count == 3)
                try await waitUntil("the replay") { try await fixture.handledCounts()["in-2"] == 2 }
                try await waitUntil("all acknowledged") { try await fixture.queue.stats().processed == 8 }
            }
            let counts = try await fixture.handledCounts()
            #expect(counts == ["before": 1, "in-0": 2, "in-1": 2, "in-2": 2, "after": 1])
            #expect(before < ids[0] && after > ids[2])
        }
    }

    @Test func longJobsKeepTheirLease() async throws {
        try await withRedisServer { server in
            // Generous against scheduling delays when the whole suite runs in parallel on 2 cores:
            // a lease is renewed after a quarter of the timeout, so only a stall of three quarters
            // (7.5 s) would lose it; shorter timeouts (3 s, then 6 s) lost it in full-suite runs.
            let fixture = QueueFixture(server: server) { $0.visibilityTimeout = .seconds(10) }
            try await fixture.queue.enqueue(fixture.probe("slow", sleepMs: 22_000))
            try await fixture.withWorkers([fixture.worker(consumer: "a"), fixture.worker(consumer: "b")]) {
                try await waitUntil(timeout: .seconds(120), "the slow job") { try await fixture.handledCounts()["slow"] != nil }
                try await waitUntil(timeout: .seconds(90), "its acknowledgement") { try await fixture.queue.stats().pending == 0 }
            }
            // Running over two visibility timeouts long, it was never reclaimed by the other worker.
            #expect(try await fixture.handledCounts()["slow"] == 1)
        }
    }

    @Test func trimKeepsPendingAndUndeliveredEntries() async throws {
        try await withRedisServer { server in
            // Stream mechanics: jobs go straight into the stream (arrival order).
            let fixture = QueueFixture(server: server) {
                $0.retention = .milliseconds(1)
                $0.scheduling = .fifo
            }
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue((0..<3).map { fixture.probe("old-\($0)") })
            let reader = RedisConnection(configuration: server.configuration)
            let taken = try await fixture.queue.read(on: reader, consumer: "c", count: 2, block: .milliseconds(10))
            let ids = try taken.map { try $0.get().id }
            try await fixture.queue.acknowledge([ids[0]])
            try await fixture.queue.enqueue(fixture.probe("new"))
            // Now: one acked, one pending, two never delivered; only the acked one may go.
            #expect(try await fixture.queue.trim(now: JobQueue.nowMilliseconds() + 60_000) == 1)
            #expect(try await fixture.queue.stats().length == 3)
            await reader.close()
        }
    }

    @Test func staleConsumersWithNothingPendingAreRemoved() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.scheduling = .fifo }  // stream ids and reads by hand
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue([fixture.probe("held"), fixture.probe("done")])
            let reader = RedisConnection(configuration: server.configuration)
            _ = try await fixture.queue.read(on: reader, consumer: "holding", count: 1, block: .milliseconds(10))
            let finished = try await fixture.queue.read(on: reader, consumer: "gone", count: 1, block: .milliseconds(10))
            try await fixture.queue.acknowledge(finished.map { try $0.get().id }, consumer: "gone")
            #expect(try await fixture.queue.stats().processedByConsumer == ["gone": 1])
            try await waitUntil("idle time to pass") { try await fixture.queue.stats().consumers.allSatisfy { $0.idleMilliseconds > 50 } }
            let removed = try await fixture.queue.removeStaleConsumers(idleLongerThan: .milliseconds(50))
            #expect(removed == ["gone"])
            #expect(try await fixture.queue.stats().consumers.map(\.name) == ["holding"])
            // Its counter folds into one field for all departed workers: no field per worker ever started.
            #expect(try await fixture.queue.stats().processedByConsumer == ["(departed)": 1])
            // A worker that leaves cleanly keeps its share until the sweep after the stale age.
            try await fixture.queue.enqueue([fixture.probe("clean")])
            let cleanJobs = try await fixture.queue.read(on: reader, consumer: "clean", count: 1, block: .milliseconds(10))
            try await fixture.queue.acknowledge(cleanJobs.map { try $0.get().id }, consumer: "clean")
            try await fixture.queue.removeConsumerIfIdle("clean")
            _ = try await fixture.queue.removeStaleConsumers(idleLongerThan: .seconds(60))
            #expect(try await fixture.queue.stats().processedByConsumer == ["(departed)": 1, "clean": 1])
            try await Task.sleep(for: .milliseconds(60))
            _ = try await fixture.queue.removeStaleConsumers(idleLongerThan: .milliseconds(50))
            let swept = try await fixture.queue.stats().processedByConsumer
            #expect(swept == ["(departed)": 2], "\(swept)")
            await reader.close()
        }
    }
}

/// Fails until told the downstream is healthy; then records the payload as handled.
struct ToggleHandler: JobHandler {
    let healthy: Switch
    let redis: RedisConnectionPool
    let key: String

    func handle(_ job: Job) async throws {
        guard healthy.on.load(ordering: .relaxed) else { throw JobError.retry("downstream unavailable") }
        try await redis.send("HINCRBY", key, job.payload, 1)
    }
}

/// Defers the job `times` times (checking that its attempt number never moves), then records it.
struct DeferringHandler: JobHandler {
    let times: Int
    let deferrals: Tally
    let redis: RedisConnectionPool
    let key: String

    func handle(_ job: Job) async throws {
        #expect(job.attempt == 0)
        if deferrals.count.load(ordering: .relaxed) < times {
            deferrals.count.add(1, ordering: .relaxed)
            throw JobError.deferred("not yet", after: .milliseconds(10))
        }
        try await redis.send("HINCRBY", key, job.payload, 1)
    }
}

/// Fails every run, saying it spent 1 attempt in runs 1-4 and then 2, 3, …
struct CountingHandler: JobHandler {
    let runs: Tally
    let seen: Seen

    func handle(_ job: Job) async throws {
        seen.values.withLock { $0.append(job.attempt) }
        let run = runs.count.add(1, ordering: .relaxed).newValue
        throw JobError.retry("failing run \(run)", after: .milliseconds(5), attempts: run <= 4 ? 1 : run - 3)
    }
}

/// The attempt numbers a handler saw, in order.
final class Seen: Sendable {
    let values = Mutex<[Int]>([])
}

final class Tally: Sendable {
    let count = Atomic<Int>(0)
}

final class Switch: Sendable {
    let on = Atomic<Bool>(false)
}
