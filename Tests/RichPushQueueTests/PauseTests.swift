import Hiredis
import RedisTestSupport
import Testing

@testable import RichPushQueue

/// Pausing an app under fair scheduling, take by take on a real Redis: a paused app's jobs stay
/// in its lanes (nothing lost, nothing dead-lettered) while another app's are taken; resumed,
/// they flow again.
@Suite("Pausing a scope")
struct PauseTests {
    @Test func aPausedScopesJobsWaitWhileAnothersAreTakenAndFlowWhenResumed() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let queues = [fixture.queue]
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 10))
            // Paused with jobs ready, and more arrive while paused (an admission must not make it ready).
            #expect(try await JobQueue.setPaused(true, app: "a", in: queues) == 1)
            #expect(try await JobQueue.setPaused(true, app: "a", in: queues) == 0)
            try await fixture.queue.enqueue(fixture.jobs("a", 5, lane: .bulk))
            try await fixture.queue.enqueue(fixture.jobs("b", 8))
            let taken = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(taken.count == 8)
            #expect(Set(taken.map(\.app)) == ["b"])
            #expect(try await fixture.queue.take(for: "c", count: 64).isEmpty)
            let stats = try await JobQueue.appTotals(try await JobQueue.appStats(in: queues), in: queues)
            #expect(stats["a"]?.waiting == 15)
            #expect(stats["a"]?.paused == true)
            #expect(try await fixture.queue.deadLetterCount() == 0)
            #expect(try await JobQueue.pausedApps(in: queues) == ["a"])

            #expect(try await JobQueue.setPaused(false, app: "a", in: queues) == 1)
            let resumed = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(resumed.count == 15)
            #expect(Set(resumed.map(\.app)) == ["a"])
            #expect(try await JobQueue.pausedApps(in: queues).isEmpty)
        }
    }

    /// A pause that lands while the app is ready, between two takes of a busy queue, holds from
    /// the next take on, and a take that finds the flag set on a ready app leaves it alone.
    @Test func aTakeLeavesAPausedReadyScopeAlone() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 6))
            try await fixture.queue.enqueue(fixture.jobs("b", 6))
            // The flag alone, as if set while the scope was being admitted: the take must honour it.
            _ = try await fixture.queue.redis.send("HSET", fixture.queue.configuration.schedulerKey, "x:a", 1)
            let taken = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(Set(taken.map(\.app)) == ["b"])
            #expect(try await fixture.queue.redis.send("ZSCORE", fixture.queue.configuration.readyKey, "a").isNull)
            try await JobQueue.setPaused(false, app: "a", in: [fixture.queue])
            let resumed = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(resumed.count == 6)
        }
    }

    /// What a replay brings back: a window of the stream's history, or the dead letters.
    enum ReplayKind: String, CaseIterable, Sendable { case history, deadLetters }

    /// A replay (of the stream's history, or of dead letters) is admitted as new jobs are: each
    /// job into its app's lane, so a paused app's replayed jobs wait with the rest of its work
    /// while another app's flow.
    @Test(arguments: ReplayKind.allCases)
    func aReplayedJobWaitsInItsAppsLane(_ kind: ReplayKind) async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let queues = [fixture.queue]
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 3) + fixture.jobs("b", 2))
            let first = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(first.count == 5)
            if kind == .deadLetters {
                for job in first { try await fixture.queue.deadLetter(id: job.id, error: "refused for good") }
                #expect(try await fixture.queue.deadLetterCount() == 5)
            }
            try await JobQueue.setPaused(true, app: "a", in: queues)
            switch kind {
            case .history: #expect(try await fixture.queue.replay(from: "-", to: "+").candidates.count == 5)
            case .deadLetters:
                #expect(try await fixture.queue.replayDeadLetters() == 5)
                #expect(try await fixture.queue.deadLetterCount() == 0)
            }
            let origins = { (app: String) in Set(first.filter { $0.app == app }.map(\.origin)) }
            let whilePaused = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(whilePaused.count == 2 && Set(whilePaused.map(\.origin)) == origins("b") && whilePaused.allSatisfy { $0.attempt == 0 })
            let stats = try await JobQueue.appTotals(try await JobQueue.appStats(in: queues), in: queues)
            #expect(stats["a"]?.waiting == 3)
            try await JobQueue.setPaused(false, app: "a", in: queues)
            let resumed = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(resumed.count == 3 && Set(resumed.map(\.origin)) == origins("a"))
        }
    }
}
