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
            var enqueued = ContinuousClock.now
            var start = ContinuousClock.now
            try await fixture.withWorkers([worker]) {
                start = ContinuousClock.now
                try await fixture.queue.enqueue(JobRequest(type: BatchRecorder.type, payload: Array("first".utf8)))
                try await waitUntil(timeout: .seconds(90), "the first job") { recorder.batches.count == 1 }
                // Five separate enqueues right after the first read returned one job (a partial
                // read): the next read waits out the linger and takes all five together.
                for index in 0..<5 {
                    try await fixture.queue.enqueue(JobRequest(type: BatchRecorder.type, payload: Array("job \(index)".utf8)))
                }
                enqueued = ContinuousClock.now
                try await waitUntil(timeout: .seconds(90), "the five") { recorder.batches.reduce(0, +) == 6 }
                try await waitUntil(timeout: .seconds(90), "all acknowledged") { try await fixture.queue.stats().processed == 6 }
            }
            let batches = recorder.batches
            #expect(batches.first == 1 && batches.reduce(0, +) == 6, "batch sizes: \(batches)")
            // Without the linger every job came alone: [1, 1, 1, 1, 1, 1]. The linger starts when
            // the worker took the first job, which is after the test enqueued it (and may be well
            // before its handler ran on a busy machine): five enqueues done within 9 s of the
            // first's are read as one. A machine stalled for longer (CI saw [1, 2, 3]) says nothing
            // about the linger.
            let sinceFirst = enqueued - start
            if sinceFirst < .seconds(9) {
                #expect(batches == [1, 5], "batch sizes: \(batches), the five enqueued \(sinceFirst) after the first")
            }
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
