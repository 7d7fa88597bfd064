import Foundation
import Hiredis
import RedisTestSupport
import Testing

@testable import RichPushQueue

/// Real `richpush worker` processes, real signals, a real redis-server that is restarted.
@Suite("Worker processes", .serialized)
struct WorkerProcessTests {
    @Test func tenThousandJobsThreeWorkersEachJobOnce() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            for start in stride(from: 0, to: 10_000, by: 1000) {
                try await fixture.queue.enqueue((start..<start + 1000).map { fixture.probe("job-\($0)") })
            }
            var workers: [ChildProcess] = []
            for index in 1...3 { workers.append(try await fixture.spawnWorker(name: "worker-\(index)", logLevel: "info")) }
            try await waitUntil(timeout: .seconds(120), "10,000 jobs to be acknowledged") {
                try await fixture.queue.stats().processed == 10_000
            }
            // A worker still starting when the others have finished would die of SIGTERM before its
            // handler is installed: stop them only once all three run their loop. (Not "once all
            // three are consumers of the group": Redis 7.0 adds a consumer only when a read returns
            // entries, and a worker that starts after the others took every job never gets one. On
            // a loaded 2-core machine a worker's start has taken more than 30 s.)
            do {
                try await waitUntil(timeout: .seconds(90), "all three workers to run") {
                    workers.allSatisfy { $0.log.contains("worker started") }
                }
            } catch {
                for worker in workers { Issue.record("worker log: \(worker.log.suffix(2000))") }
                for worker in workers { worker.signal(SIGTERM) }
                for worker in workers { _ = try await worker.wait() }
                throw error
            }
            for worker in workers { worker.signal(SIGTERM) }
            for worker in workers { #expect(try await worker.wait() == 0, "worker log: \(worker.log.suffix(2000))") }
            let counts = try await fixture.handledCounts()
            #expect(counts.count == 10_000)
            #expect(counts.values.allSatisfy { $0 == 1 }, "some jobs ran twice: \(counts.filter { $0.value != 1 }.prefix(5))")
            let stats = try await fixture.queue.stats()
            #expect(stats.pending == 0 && stats.lag == 0 && stats.deadLetters == 0)
            #expect(stats.consumers.isEmpty, "workers leave the group on a clean exit")
        }
    }

    @Test func killNineLosesNothingAndRedeliversWithinTheVisibilityTimeout() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.visibilityTimeout = .seconds(2) }
            try await fixture.queue.ensureGroup()
            // Jobs long enough that the victim holds 20 at a time for seconds, however late it starts
            // (with 100 ms jobs it ran all of them within a second, and a poll on a busy machine
            // could miss that window).
            let jobs = 60
            // Two apps' jobs under fair scheduling (the default): the kill must lose neither's,
            // and each app's count of jobs in flight must come back to zero.
            try await fixture.queue.enqueue(
                (0..<jobs).map { index in
                    var request = fixture.probe("job-\(index)", sleepMs: 1500)
                    request.app = index % 2 == 0 ? "app-a" : "app-b"
                    return request
                })
            let victim = try await fixture.spawnWorker(name: "victim", extra: ["--concurrency", "20"])
            // What the victim held when it was seen holding enough (a second read could come after
            // it finished them, on a slow machine).
            var held = 0
            // (A worker's start took over 30 s with the whole suite on 2 cores.)
            try await waitUntil(timeout: .seconds(90), "the victim to hold jobs in flight") {
                held = try await fixture.queue.stats().consumers.first { $0.name == "victim" }?.pending ?? 0
                return held >= 10
            }
            victim.signal(SIGKILL)
            #expect(try await victim.wait() == 128 + SIGKILL)
            let killedAt = ContinuousClock.now
            let survivor = try await fixture.spawnWorker(name: "survivor", logLevel: "info", extra: ["--concurrency", "20"])
            try await waitUntil(timeout: .seconds(90), "the survivor to start") { survivor.log.contains("worker started") }
            // The survivor takes the victim's jobs once they have been idle for the visibility
            // timeout, or at once if its own start took longer than that.
            let due = max(ContinuousClock.now - killedAt, .seconds(2))
            try await waitUntil(timeout: .seconds(60), "the survivor to reclaim the victim's jobs") {
                try await fixture.queue.stats().consumers.first { $0.name == "victim" }?.pending ?? 0 == 0
            }
            let redelivery = ContinuousClock.now - killedAt
            try await waitUntil(timeout: .seconds(60), "every job to complete") {
                let handled = try await fixture.handledCounts().count
                let pending = try await fixture.queue.stats().pending
                return handled == jobs && pending == 0
            }
            survivor.signal(SIGTERM)
            #expect(try await survivor.wait() == 0)
            #expect(held >= 10)
            #expect(redelivery < due + .seconds(5), "redelivered \(redelivery) after the kill, due \(due)")
            let counts = try await fixture.handledCounts()
            #expect(counts.count == jobs, "lost jobs")
            // At-least-once: a job the victim finished but had not acknowledged may run twice; no more.
            #expect(counts.values.allSatisfy { $0 >= 1 && $0 <= 2 })
            let numbers = try await fixture.redis.send(
                "HMGET", fixture.queue.configuration.schedulerKey, "f:app-a", "f:app-b", "t:app-a", "t:app-b", "waiting")
            #expect(numbers.array?.map(\.int) == [0, 0, jobs / 2, jobs / 2, 0], "in flight, taken, waiting: \(numbers)")
        }
    }

    @Test func workersCarryOnAfterRedisRestarts() async throws {
        try await withRedisServer(appendOnly: true) { server in
            let fixture = QueueFixture(server: server) { $0.visibilityTimeout = .seconds(3) }
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue((0..<2000).map { fixture.probe("job-\($0)", sleepMs: 2) })
            var workers: [ChildProcess] = []
            for index in 1...2 { workers.append(try await fixture.spawnWorker(name: "w\(index)", extra: ["--concurrency", "8"])) }
            try await waitUntil(timeout: .seconds(60), "some progress") { try await fixture.queue.stats().processed >= 300 }
            let acknowledgedBefore = try await fixture.queue.stats().processed
            server.stop()  // SHUTDOWN: the AOF is flushed, as on a planned restart
            try await Task.sleep(for: .milliseconds(300))  // the outage itself, not a wait for a condition
            try await server.start()
            try await waitUntil(timeout: .seconds(90), "every job after the restart") {
                let handled = try await fixture.handledCounts().count
                let stats = try await fixture.queue.stats()
                return handled == 2000 && stats.pending == 0 && stats.lag == 0
            }
            for worker in workers { worker.signal(SIGTERM) }
            for worker in workers { #expect(try await worker.wait() == 0, "worker log: \(worker.log.suffix(2000))") }
            let stats = try await fixture.queue.stats()
            #expect(stats.processed >= acknowledgedBefore, "acknowledged work survived the restart")
            #expect(stats.processed >= 2000)
            #expect(try await fixture.handledCounts().values.allSatisfy { $0 >= 1 && $0 <= 2 })
        }
    }

    @Test func sigtermDrainsRunningJobsAndExitsZero() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue((0..<50).map { fixture.probe("job-\($0)", sleepMs: 700) })
            let worker = try await fixture.spawnWorker(name: "draining", extra: ["--concurrency", "5", "--drain-timeout", "5"])
            try await waitUntil(timeout: .seconds(30), "jobs in flight") {
                try await fixture.queue.stats().consumers.first?.pending ?? 0 == 5
            }
            worker.signal(SIGTERM)
            #expect(try await worker.wait(timeout: .seconds(60)) == 0, "worker log: \(worker.log.suffix(2000))")
            let stats = try await fixture.queue.stats()
            // The five running jobs finished and were acknowledged; nothing is left pending; the
            // rest wait, untaken or undelivered, for the next worker.
            #expect(stats.pending == 0)
            let handled = try await fixture.handledCounts()
            #expect(stats.processed == 5 && handled.count == 5)
            #expect(stats.waiting + stats.lag == 45)
        }
    }

    @Test func drainTimeoutReleasesUnfinishedJobsForImmediateReclaim() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.visibilityTimeout = .seconds(60) }
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue((0..<3).map { fixture.probe("slow-\($0)", sleepMs: 30_000) })
            let worker = try await fixture.spawnWorker(name: "stuck", extra: ["--concurrency", "3", "--drain-timeout", "0.5"])
            try await waitUntil(timeout: .seconds(30), "jobs in flight") { try await fixture.queue.stats().pending == 3 }
            worker.signal(SIGTERM)
            // Before the jobs' 30 s sleep ends: the drain timeout, not the jobs, ended the worker.
            #expect(try await worker.wait(timeout: .seconds(25)) == 0, "worker log: \(worker.log.suffix(2000))")
            // Released: another consumer can claim them now, not a minute from now.
            let reclaimed = try await fixture.queue.reclaim(for: "next")
            #expect(reclaimed.jobs.count == 3)
        }
    }

    @Test func statsWatchShowsRatesAndConsumers() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue((0..<3000).map { fixture.probe("job-\($0)", sleepMs: 5) })
            let worker = try await fixture.spawnWorker(name: "watched", extra: ["--concurrency", "16"])
            try await waitUntil(timeout: .seconds(30), "the worker to start") { try await fixture.queue.stats().processed > 0 }
            let c = fixture.queue.configuration
            let watch = try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "stats", "--redis-url", server.url, "--queue-prefix", c.prefix, "--watch", "--refreshes", "3", "--interval", "0.3",
                ],
                logFile: server.directory.appendingPathComponent("watch.log"))
            #expect(try await watch.wait(timeout: .seconds(20)) == 0)
            let screen = watch.log
            #expect(screen.components(separatedBy: "rates: processed").count == 3, "two refreshes with rates: \(screen.suffix(800))")
            // The consumer's line shows how many jobs it finished, as the queue counted them.
            let processed = screen.components(separatedBy: "watched  processed ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
            #expect(processed.count == 3 && processed.last! > 0, "\(screen.suffix(800))")
            // The worker was running between refreshes, so some rate is above zero.
            let rates = screen.components(separatedBy: "rates: processed ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
            #expect(rates.contains { $0 > 0 }, "\(rates)")
            worker.signal(SIGTERM)
            #expect(try await worker.wait() == 0)
        }
    }
}
