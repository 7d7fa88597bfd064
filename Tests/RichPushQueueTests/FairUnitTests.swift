import Hiredis
import RedisTestSupport
import RichPushBench
import Synchronization
import Testing

@testable import RichPushQueue

/// A batch handler's units under fair scheduling: while several apps share a worker, every app's
/// jobs run in units of the same size (a unit's slots are freed when its last job ends, so an
/// app in bigger units would hold its slots longer per job); an app alone keeps whole reads.
@Suite("Fair scheduling's batch units")
struct FairUnitTests {
    /// Runs `requests` through one worker (64 slots, reads of 64, units of at most 16) until all
    /// are acknowledged; the units its batch handler was given.
    func units(of requests: [JobRequest], on server: RedisServer) async throws -> [(app: String, size: Int)] {
        let fixture = QueueFixture(server: server)
        let recorder = UnitRecorder()
        var handlers = JobHandlers()
        handlers.register(recorder, for: ProbeJobHandler.type)
        try await fixture.queue.ensureGroup()
        try await fixture.queue.enqueue(requests)
        let worker = fixture.worker(handlers) {
            $0.concurrency = 64; $0.batchSize = 64; $0.fairUnitSize = 16; $0.linger = .zero
        }
        try await fixture.withWorkers([worker]) {
            try await waitUntil(timeout: .seconds(60), "all \(requests.count) acknowledged") {
                try await fixture.queue.stats().processed == requests.count
            }
        }
        return recorder.units
    }

    @Test func appsSharingAWorkerRunInUnitsOfOneSize() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            // One read of 64 holds both apps (32 each): without a unit size, two units of 32.
            let units = try await units(of: fixture.jobs("a", 48) + fixture.jobs("b", 48), on: server)
            #expect(units.reduce(0) { $0 + $1.size } == 96)
            #expect(units.allSatisfy { $0.size <= 16 }, "units: \(units)")
            #expect(Set(units.map(\.app)) == ["a", "b"])
        }
    }

    @Test func anAppAloneKeepsWholeReads() async throws {
        try await withRedisServer { server in
            let units = try await units(of: QueueFixture(server: server).jobs("a", 40), on: server)
            #expect(units.map(\.size) == [40])
        }
    }
}

/// Records each batch it is given: its app and its size.
private final class UnitRecorder: BatchJobHandler {
    private let recorded = Mutex<[(app: String, size: Int)]>([])

    var units: [(app: String, size: Int)] { recorded.withLock { $0 } }

    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        recorded.withLock { $0.append((jobs[0].app ?? "?", jobs.count)) }
        return jobs.map { _ in .success(()) }
    }
}
