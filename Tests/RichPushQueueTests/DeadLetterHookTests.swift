import Hiredis
import RedisTestSupport
import Synchronization
import Testing

@testable import RichPushQueue

/// ``JobHandler/willDeadLetter(_:)``: called once per read, before the dead letters are written,
/// and a failure of it while Redis is away keeps the jobs pending rather than losing them.
@Suite("Dead-letter hook")
struct DeadLetterHookTests {
    @Test func theHookRunsOncePerReadBeforeTheDeadLetters() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            let handler = HookRecorder(deadLetters: fixture.queue)
            var handlers = JobHandlers()
            handlers.register(handler, for: "doomed")
            let ids = try await fixture.queue.enqueue((0..<3).map { JobRequest(type: "doomed", payload: Array("job-\($0)".utf8)) })
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil("the dead letters") { try await fixture.queue.deadLetterCount() == 3 }
            }
            // One read, one call, with every job and its reason; no dead letter was written before it.
            #expect(handler.calls.count == 1)
            #expect(handler.calls.first?.map(\.origin).sorted() == ids.sorted())
            #expect(handler.calls.first?.allSatisfy { $0.reason == "refused for good" } == true)
            #expect(handler.deadLettersSeenByHook == [0])
            #expect(Set(try await fixture.queue.deadLetters().map(\.origin)) == Set(ids))
        }
    }

    @Test func aHookFailingWhileRedisIsAwayLeavesTheJobPendingUntilItWorks() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server) { $0.visibilityTimeout = .milliseconds(300) }
            // The worker tries a transient failure 8 times before it gives up on this round.
            let handler = HookRecorder(failures: 8)
            var handlers = JobHandlers()
            handlers.register(handler, for: "doomed")
            try await fixture.queue.enqueue(JobRequest(type: "doomed", payload: Array("once".utf8)))
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil(timeout: .seconds(60), "the dead letter") { try await fixture.queue.deadLetterCount() == 1 }
                // Settled once: nothing pending, no second dead letter from a late reclaim.
                try await waitUntil("nothing pending") { try await fixture.queue.stats().pending == 0 }
            }
            // 8 failed calls, then at least one that worked; how many runs and calls exactly depends
            // on how the reclaim (300 ms) meets the retries on a busy machine, but never two dead letters.
            #expect(handler.calls.count >= 9)
            #expect(handler.runs >= 2, "reclaimed and run again after the hook failed")
            #expect(try await fixture.queue.deadLetterCount() == 1)
            #expect(try await fixture.queue.stats().deadLettered == 1)
        }
    }
}

/// A handler whose jobs fail permanently and which records every ``willDeadLetter(_:)`` call;
/// its first `failures` calls throw a transient Redis error, and with `deadLetters` it notes
/// how many dead letters existed when each call came.
final class HookRecorder: BatchJobHandler {
    struct Call: Sendable {
        let id: String
        /// The id the job was enqueued under (its ticket, under fair scheduling).
        let origin: String
        let reason: String
    }

    private let state = Mutex<(calls: [[Call]], runs: Int, seen: [Int])>(([], 0, []))
    private let failures: Int
    private let deadLetters: JobQueue?

    init(failures: Int = 0, deadLetters: JobQueue? = nil) {
        self.failures = failures
        self.deadLetters = deadLetters
    }

    var calls: [[Call]] { state.withLock { $0.calls } }
    var runs: Int { state.withLock { $0.runs } }
    var deadLettersSeenByHook: [Int] { state.withLock { $0.seen } }

    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        state.withLock { $0.runs += 1 }
        return jobs.map { _ in .failure(JobError.permanent("refused for good")) }
    }

    func willDeadLetter(_ jobs: [(job: Job, reason: String)]) async throws {
        if let deadLetters {
            let count = try await deadLetters.deadLetterCount()
            state.withLock { $0.seen.append(count) }
        }
        let call = state.withLock { state in
            state.calls.append(jobs.map { Call(id: $0.job.id, origin: $0.job.origin, reason: $0.reason) })
            return state.calls.count
        }
        if call <= failures { throw RedisError(code: .connectionLost, message: "Redis went away (test)") }
    }
}
