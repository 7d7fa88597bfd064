import Foundation
import Hiredis
import RedisTestSupport
import Synchronization
import Testing

@testable import RichPushQueue

/// `linger`: after a read that found fewer jobs than it asked for, the next read waits, so jobs
/// that arrive one by one at a moderate rate are taken and handled as one batch.
@Suite("Read linger")
struct LingerTests {
    @Test func jobsArrivingDuringTheLingerAreReadAsOneBatch() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let recorder = BatchRecorder()
            var handlers = JobHandlers()
            handlers.register(recorder, for: BatchRecorder.type)
            // A linger of 10 s: the five enqueues below must all land within it, and a busy
            // machine (load 27, stress-ng beside the suite) stalled them past a linger of 2 s.
            let worker = fixture.worker(handlers) {
                $0.linger = .seconds(10); $0.batchSize = 16
            }
            try await fixture.withWorkers([worker]) {
                try await fixture.queue.enqueue(JobRequest(type: BatchRecorder.type, payload: Array("first".utf8)))
                try await waitUntil("the first job") { recorder.batches.count == 1 }
                // Five separate enqueues right after the first read returned one job (a partial
                // read): the next read waits out the linger and takes all five together.
                for index in 0..<5 {
                    try await fixture.queue.enqueue(JobRequest(type: BatchRecorder.type, payload: Array("job \(index)".utf8)))
                }
                try await waitUntil(timeout: .seconds(60), "the five") { recorder.batches.reduce(0, +) == 6 }
                try await waitUntil("all acknowledged") { try await fixture.queue.stats().processed == 6 }
            }
            // Normally [1, 5]; on a busy machine the five enqueues may straddle the linger's end
            // (a CI run saw [1, 2, 3]). Without the linger every job came alone: [1, 1, 1, 1, 1, 1].
            let batches = recorder.batches
            #expect(batches.first == 1 && batches.count >= 2 && batches[1] >= 2, "batch sizes: \(batches)")
        }
    }

    @Test func lingerIsFiveMillisecondsByDefault() {
        #expect(JobWorkerConfiguration().linger == .milliseconds(5))
    }
}

/// Records the size of every batch it is given.
private final class BatchRecorder: BatchJobHandler {
    static let type = "batch-recorder"
    private let sizes = Mutex<[Int]>([])

    var batches: [Int] { sizes.withLock { $0 } }

    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        sizes.withLock { $0.append(jobs.count) }
        return jobs.map { _ in .success(()) }
    }
}
