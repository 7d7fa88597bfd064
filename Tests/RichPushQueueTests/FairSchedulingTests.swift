import Hiredis
import RedisTestSupport
import Testing

@testable import RichPushQueue

/// Fair scheduling's order, counted take by take on a real Redis: no clock, no timing.
@Suite("Fair scheduling across scopes")
struct FairSchedulingTests {
    /// Takes one job at a time, `count` times, acknowledging each; the scopes in the order taken.
    func takeOneByOne(_ fixture: QueueFixture, _ count: Int, quantum: Int = 1) async throws -> [String] {
        var order: [String] = []
        for _ in 0..<count {
            let taken = try await fixture.queue.take(for: "c", count: 1, quantum: quantum).map { try $0.get() }
            guard let job = taken.first else { break }
            order.append(job.app ?? "?")
            try await fixture.queue.acknowledge([(job.id, job.inFlightApp)])
        }
        return order
    }

    @Test func scopesInterleaveByWeight() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await JobQueue.setLimits(AppShare(weight: 2), of: "a", in: [fixture.queue])
            // All of a's jobs arrive first: arrival order would give a's 30 before any of b's.
            try await fixture.queue.enqueue(fixture.jobs("a", 30))
            try await fixture.queue.enqueue(fixture.jobs("b", 30))
            let order = try await takeOneByOne(fixture, 30)
            #expect(order.count == 30)
            // 2:1 in every window of three takes.
            for start in stride(from: 0, to: 30, by: 3) {
                let window = order[start..<start + 3]
                #expect(window.filter { $0 == "a" }.count == 2, "takes \(start)…: \(window)")
            }
        }
    }

    @Test func aScopeAloneTakesEverything() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await JobQueue.setLimits(AppShare(weight: 1), of: "a", in: [fixture.queue])
            try await fixture.queue.enqueue(fixture.jobs("a", 50))
            let taken = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(taken.count == 50)
            #expect(Set(taken.map(\.app)) == ["a"])
            #expect(try await fixture.queue.stats().waiting == 0)
        }
    }

    @Test func aScopesSingleDeviceJobGoesBeforeItsFanOut() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 20, lane: .bulk))
            let first = try await fixture.queue.take(for: "c", count: 2).map { try $0.get() }
            #expect(first.map(\.lane) == [.bulk, .bulk])
            try await fixture.queue.enqueue(fixture.jobs("a", 1, lane: .now))
            let next = try await fixture.queue.take(for: "c", count: 3).map { try $0.get() }
            #expect(next.map(\.lane) == [.now, .bulk, .bulk])
        }
    }

    @Test func aScopeJoiningLateGetsItsShareFromNowOn() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 40))
            #expect(try await takeOneByOne(fixture, 20) == Array(repeating: "a", count: 20))
            // b was idle while a ran alone: it gets half from now on, not a burst to catch up.
            try await fixture.queue.enqueue(fixture.jobs("b", 20))
            let order = try await takeOneByOne(fixture, 10)
            #expect(order.filter { $0 == "b" }.count == 5, "\(order)")
        }
    }

    @Test func theCapOnJobsInFlightHoldsAndSettlingGivesItBack() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.retry = RetryPolicy(maxAttempts: 3, base: .seconds(60), cap: .seconds(60)) }
            try await fixture.queue.ensureGroup()
            try await JobQueue.setLimits(AppShare(weight: 1, maxInFlight: 3), of: "a", in: [fixture.queue])
            try await fixture.queue.enqueue(fixture.jobs("a", 10))
            try await fixture.queue.enqueue(fixture.jobs("b", 10))
            let first = try await fixture.queue.take(for: "c", count: 10).map { try $0.get() }
            // Filtered before the expectations, not again after them: Swift 6.3 gave the closure
            // `{ $0.app == "a" }` written after the two #expect the discriminator of the
            // closure inside the second one, and so ran `{ $0.app == "b" }` in its place.
            let held = first.filter { $0.app == "a" }
            #expect(held.count == 3)
            #expect(first.filter { $0.app == "b" }.count == 7)
            // a is at its cap: nothing of a's until one of its jobs is settled, whichever way.
            #expect(try await fixture.queue.take(for: "c", count: 10).map { try $0.get().app } == ["b", "b", "b"])
            try await fixture.queue.acknowledge([(held[0].id, held[0].inFlightApp)])
            try await fixture.queue.retry(held[1], after: .seconds(60), error: "later")
            try await fixture.queue.deadLetter(id: held[2].id, error: "for good")
            let after = try await fixture.queue.take(for: "c", count: 10).map { try $0.get() }
            try #require(after.count == 3 && after.allSatisfy { $0.app == "a" }, "\(after.map(\.app))")
            // A job settled twice (reclaimed and finished by two workers) gives back one.
            try await fixture.queue.acknowledge([(after[0].id, after[0].inFlightApp)])
            try await fixture.queue.acknowledge([(after[0].id, after[0].inFlightApp)])
            #expect(try await fixture.queue.take(for: "c", count: 10).count == 1)
        }
    }

    @Test func aWorkersSlotsAreSharedByWeightAmongTheScopesWithWork() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 20))
            // Alone, a may fill the worker's 8 slots: it runs 4, it gets 4 more.
            #expect(try await fixture.queue.take(for: "c", count: 8, slots: 8, running: ["a": 4]).count == 4)
            // With b waiting too, a's share is half the slots, which the 8 it runs already exceed
            // (its provider is slow, say): the free slots go to b only.
            try await fixture.queue.enqueue(fixture.jobs("b", 20))
            let taken = try await fixture.queue.take(for: "c", count: 8, slots: 8, running: ["a": 8]).map { try $0.get().app }
            #expect(taken == Array(repeating: "b", count: 4))
            // Without a share of slots (0), the order alone decides.
            let order = try await fixture.queue.take(for: "c", count: 8, quantum: 1).map { try $0.get().app }
            #expect(Set(order) == ["a", "b"])
        }
    }

    /// Water-filling: an app that needs fewer slots than its share gets what it needs, and the
    /// rest goes to the others by weight (one job of b does not halve a's slots).
    @Test func slotsAnAppDoesNotNeedGoToTheOthers() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 20))
            try await fixture.queue.enqueue(fixture.jobs("b", 1))
            let taken = try await fixture.queue.take(for: "c", count: 8, slots: 8).map { try $0.get().app }
            #expect(taken.filter { $0 == "b" }.count == 1)
            #expect(taken.filter { $0 == "a" }.count == 7, "\(taken)")
            // Both with more work than the slots: half each, as before.
            try await fixture.queue.enqueue(fixture.jobs("b", 20))
            let shared = try await fixture.queue.take(for: "c", count: 8, slots: 16, running: ["a": 7, "b": 1]).map { try $0.get().app }
            #expect(shared.filter { $0 == "a" }.count == 1 && shared.filter { $0 == "b" }.count == 7, "\(shared)")
        }
    }

    /// A worker's bulk slots: a fan-out's sub-jobs move no further than the bulk room the worker
    /// gives, their app stays ready meanwhile, and single-device jobs (its own and others') pass.
    @Test func bulkJobsMoveNoFurtherThanTheBulkRoom() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 20, lane: .bulk))
            let first = try await fixture.queue.take(for: "c", count: 8, bulkRoom: 6).map { try $0.get() }
            #expect(first.count == 6 && first.allSatisfy { $0.lane == .bulk })
            #expect(try await fixture.queue.take(for: "c", count: 8, bulkRoom: 0).isEmpty)
            #expect(
                try await fixture.redis.send("ZSCORE", fixture.queue.configuration.readyKey, "a").string != nil, "a left the ready apps")
            try await fixture.queue.enqueue(fixture.jobs("b", 1))
            #expect(try await fixture.queue.take(for: "c", count: 8, bulkRoom: 0).map { try $0.get().app } == ["b"])
            try await fixture.queue.enqueue(fixture.jobs("a", 1, lane: .now))
            #expect(try await fixture.queue.take(for: "c", count: 8, bulkRoom: 0).map { try $0.get().lane } == [.now])
            let rest = try await fixture.queue.take(for: "c", count: 20, bulkRoom: 20).map { try $0.get() }
            #expect(rest.count == 14 && rest.allSatisfy { $0.lane == .bulk && $0.app == "a" })
        }
    }

    /// A take that moves a scope's last job (here up to its share of slots: it got all it
    /// wanted) takes it out of the ready ones, so that its next job rings the bell for a worker
    /// blocked for want of work. Before, it stayed "ready" with nothing waiting, its next job
    /// rang nothing, and the blocked workers slept out their block time (a single-device push
    /// waited up to 500 ms during another app's fan-out).
    @Test func aScopeWhoseLastJobIsTakenLeavesTheReadyOnes() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            let c = fixture.queue.configuration
            try await fixture.queue.enqueue(fixture.jobs("a", 20))
            try await fixture.queue.enqueue(fixture.jobs("b", 1))
            _ = try await fixture.redis.send("DEL", c.bellKey)
            // b's share of 8 slots is what it needs (1): it gets exactly what it wanted.
            let taken = try await fixture.queue.take(for: "c", count: 8, slots: 8).map { try $0.get().app }
            #expect(taken.filter { $0 == "b" }.count == 1)
            #expect(try await fixture.redis.send("ZSCORE", c.readyKey, "b").string == nil, "b has nothing waiting but is still ready")
            _ = try await fixture.redis.send("DEL", c.bellKey)
            try await fixture.queue.enqueue(fixture.jobs("b", 1))
            #expect(try await fixture.redis.send("LLEN", c.bellKey).int == 1, "b's next job rang no bell")
        }
    }

    /// A call that admits many jobs (here a promotion of 40 due jobs of two apps) keeps its
    /// bookkeeping once: one reservation of tickets per 32 jobs, one look-up of each app in the
    /// ready set, one addition to `waiting`; the counts come out exact and the tickets distinct.
    @Test func aCallAdmittingManyJobsKeepsItsBookkeepingOnce() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            let past = JobQueue.nowMilliseconds() - 1000
            let requests = fixture.jobs("a", 25) + fixture.jobs("b", 15)
            try await fixture.queue.enqueue(requests, at: Array(repeating: past, count: requests.count))
            _ = try await server.probe("CONFIG", "RESETSTAT")
            #expect(try await fixture.queue.promoteDueRetries() == 40)
            #expect(try await server.commandCalls("hincrby") == 3, "tickets twice (32 + 8), waiting once")
            #expect(try await server.commandCalls("zscore") == 2, "once per app")
            #expect(try await fixture.queue.stats().waiting == 40)
            let taken = try await fixture.queue.take(for: "c", count: 64).map { try $0.get() }
            #expect(taken.count == 40)
            #expect(Set(taken.map(\.origin)).count == 40)
            #expect(taken.allSatisfy { $0.origin.hasPrefix("w-") })
            #expect(try await fixture.queue.stats().waiting == 0)
        }
    }

    @Test func aCountOfJobsInFlightThatALostWriteLeftWrongIsSetRight() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await JobQueue.setLimits(AppShare(weight: 1, maxInFlight: 2), of: "a", in: [fixture.queue])
            try await fixture.queue.enqueue(fixture.jobs("a", 5))
            // One pending, one moved but not yet read: two in flight.
            #expect(try await fixture.queue.take(for: "c", count: 1).count == 1)
            _ = try await fixture.queue.take(for: "c", count: 1, read: false)
            let sched = fixture.queue.configuration.schedulerKey
            try await fixture.redis.send("HSET", sched, "f:a", 9, "f:gone", 4)
            #expect(try await fixture.queue.take(for: "c", count: 5).isEmpty == false)  // the undelivered one only
            #expect(try await fixture.queue.recountInFlight() == 2)
            #expect(try await fixture.redis.send("HMGET", sched, "f:a", "f:gone").array?.map(\.int) == [2, 0])
            #expect(try await fixture.queue.recountInFlight() == 0)
        }
    }

    @Test func aBlockedWorkerWakesWhenAScopeGetsWork() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            let reader = RedisConnection(configuration: server.configuration)
            // Nothing to take, nothing rung: the wait lasts its whole block time.
            #expect(try await fixture.queue.take(for: "c", count: 8).isEmpty)
            let clock = ContinuousClock()
            let empty = clock.now
            try await fixture.queue.waitForWork(on: reader, block: .milliseconds(300))
            #expect(clock.now - empty >= .milliseconds(250))
            // A scope becoming ready rings once: the next wait answers at once, then one wait more
            // blocks again (one token per scope that became ready, not per job).
            try await fixture.queue.enqueue(fixture.jobs("a", 5))
            try await fixture.queue.waitForWork(on: reader, block: .seconds(20))
            #expect(try await fixture.redis.send("LLEN", fixture.queue.configuration.bellKey).int == 0)
            await reader.close()
        }
    }
}
