import Hiredis
import RedisTestSupport
import RichPushBench
import Synchronization
import Testing

@testable import RichPushQueue

/// A worker's slots kept for single-device notifications (`nowSlots`): a fan-out's sub-jobs never
/// take them, so another app's push starts while the fan-out fills the worker; and a worker
/// whose take came up short because of them is woken by its own bell when a unit ends, not after
/// its block time.
@Suite("Slots kept for single-device notifications")
struct NowSlotsTests {
    @Test func aSingleDevicePushStartsWhileAFanOutFillsTheWorker() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let handler = GatedBulkHandler()
            var handlers = JobHandlers()
            handlers.register(handler, for: ProbeJobHandler.type)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(fixture.jobs("a", 10, lane: .bulk))
            // 4 slots, 2 kept: bulk jobs hold at most 2. The block time (300 s) outlasts every wait
            // below (90 s each, for a busy machine: a CI run took 111 s in all with waits of 30 s):
            // only a bell (the shared one, or the worker's own) lets the worker go on.
            let worker = fixture.worker(handlers) {
                $0.concurrency = 4; $0.nowSlots = 2; $0.linger = .zero; $0.blockTime = .seconds(300)
            }
            try await fixture.withWorkers([worker]) {
                try await waitUntil(timeout: .seconds(90), "two bulk jobs running") { handler.state.withLock { $0.running } == 2 }
                try await fixture.queue.enqueue(fixture.jobs("b", 1))
                try await waitUntil(timeout: .seconds(90), "b's job done while the bulk jobs hold") {
                    handler.state.withLock { $0.done.contains("b") }
                }
                #expect(handler.state.withLock { $0.running } == 2)
                handler.state.withLock { $0.open = true }
                // Each pair of bulk jobs ends, the worker's own bell rings, the next pair starts:
                // without that ring the worker would wait out its 300 s block after the first pair.
                try await waitUntil(timeout: .seconds(90), "all 11 acknowledged") { try await fixture.queue.stats().processed == 11 }
            }
            #expect(handler.state.withLock { $0.most } == 2)
        }
    }
}

/// Holds its bulk-lane jobs until `open`; counts them running and records each job's app done.
private final class GatedBulkHandler: BatchJobHandler {
    struct State {
        var open = false, running = 0, most = 0
        var done: [String] = []
    }

    let state = Mutex(State())

    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        let bulk = jobs.count { $0.lane == .bulk }
        state.withLock {
            $0.running += bulk
            $0.most = max($0.most, $0.running)
        }
        while bulk > 0 && !state.withLock({ $0.open }) { try? await Task.sleep(for: .milliseconds(5)) }
        state.withLock {
            $0.running -= bulk
            $0.done += jobs.map { $0.app ?? "?" }
        }
        return jobs.map { _ in .success(()) }
    }
}
