import Foundation
import Hiredis
import RedisTestSupport
import RichPushQueue
import Testing

/// scripts/scale-workers.sh as an operator runs it, during a run of 20,000 jobs: up to three
/// worker processes, down to one while jobs are in flight, up to two, then down to none.
@Suite("scale-workers.sh", .serialized)
struct ScaleScriptTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func scalingUpAndDownDuringTwentyThousandJobsLosesAndDuplicatesNothing() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let prefix = fixture.queue.configuration.prefix
            try await fixture.queue.ensureGroup()
            for start in stride(from: 0, to: 20_000, by: 2000) {
                try await fixture.queue.enqueue((start..<start + 2000).map { fixture.probe("job-\($0)", sleepMs: 10) })
            }
            let state = server.directory.appendingPathComponent("workers")
            func scale(_ count: Int) async throws -> String {
                let script = try await ChildProcess(
                    executable: URL(fileURLWithPath: "/bin/bash"),
                    arguments: [
                        Self.root.appendingPathComponent("scripts/scale-workers.sh").path, "\(count)",
                        "--queue-prefix", prefix, "--concurrency", "8", "--maintenance-interval", "0.1", "--log-level",
                        "warning",
                    ],
                    // richpush-bench worker: richpush worker with the probe job type.
                    environment: [
                        "RICHPUSH_BIN": try richpushExecutable().path, "RICHPUSH_WORKER_BIN": try richpushBenchExecutable().path,
                        "RICHPUSH_REDIS_URL": server.url,
                        "RICHPUSH_WORKERS_DIR": state.path,
                    ],
                    logFile: server.directory.appendingPathComponent("scale-\(count)-\(UUID().uuidString.prefix(4)).log"))
                let status = try await script.wait(timeout: .seconds(60))
                #expect(status == 0, "scale-workers.sh \(count): \(script.log)")
                return script.log
            }
            do {
                let up = try await scale(3)
                #expect(up.components(separatedBy: "started worker").count - 1 == 3)
                #expect(up.contains("running locally: 3 worker(s)"))
                try await waitUntil(timeout: .seconds(60), "work to start") { try await fixture.queue.stats().processed >= 2000 }
                let down = try await scale(1)
                #expect(down.components(separatedBy: "stopped worker").count - 1 == 2)
                let processedAtScaleDown = try await fixture.queue.stats().processed
                #expect(processedAtScaleDown < 20_000, "the run was over before scaling down; nothing was tested")
                try await waitUntil(timeout: .seconds(60), "more work") {
                    try await fixture.queue.stats().processed >= processedAtScaleDown + 2000
                }
                _ = try await scale(2)
                try await waitUntil(timeout: .seconds(120), "20,000 jobs to be acknowledged") {
                    try await fixture.queue.stats().processed == 20_000
                }
                let end = try await scale(0)
                #expect(end.contains("running locally: 0 worker(s)"))
            } catch {
                _ = try? await scale(0)
                throw error
            }
            let counts = try await fixture.handledCounts()
            #expect(counts.count == 20_000, "lost \(20_000 - counts.count) jobs")
            #expect(counts.values.allSatisfy { $0 == 1 }, "some jobs ran twice: \(counts.filter { $0.value != 1 }.prefix(5))")
            let stats = try await fixture.queue.stats()
            #expect(stats.pending == 0 && stats.lag == 0 && stats.deadLetters == 0)
            // The work spread over local-1, -2 and -3 (the second scale-up reuses local-2's name).
            #expect(stats.processedByConsumer.count == 3, "\(stats.processedByConsumer)")
            #expect(stats.processedByConsumer.values.reduce(0, +) == 20_000)
            #expect(stats.processedByConsumer.values.allSatisfy { $0 > 0 })
        }
    }
}
