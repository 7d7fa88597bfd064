import RedisTestSupport
import Testing

@testable import RichPushQueue

/// The platforms a failure names (``JobError/platforms``) stay with the job: on its retry in the
/// delayed set and on its dead letter (field `fp`, ``Job/failedOn``), where the console's platform
/// filter finds them; a later failure naming others replaces them.
@Suite("Failed platforms kept with the job")
struct FailedPlatformsTests {
    /// Fails every job: retryable naming fcm and apns, or, for payload `permanent`, for good
    /// naming webpush.
    struct FailingOnPlatforms: JobHandler {
        func handle(_ job: Job) async throws {
            if job.payload == Array("permanent".utf8) { throw JobError.permanent("410 from the push service").on(platforms: ["webpush"]) }
            throw JobError.retry("2 pushes failed").on(platforms: ["fcm", "apns", "fcm"])
        }
    }

    @Test func aRetryAndADeadLetterKeepThePlatformsThatFailed() async throws {
        try await withRedisServer { server in
            // The retry waits long enough to be read in the delayed set.
            let fixture = QueueFixture(server: server) { $0.retry = RetryPolicy(maxAttempts: 5, base: .seconds(600), cap: .seconds(600)) }
            var handlers = JobHandlers()
            handlers.register(FailingOnPlatforms(), for: "platformed")
            try await fixture.queue.enqueue(JobRequest(type: "platformed", payload: Array("retry".utf8)))
            try await fixture.queue.enqueue(JobRequest(type: "platformed", payload: Array("permanent".utf8)))
            try await fixture.withWorkers([fixture.worker(handlers)]) {
                try await waitUntil(timeout: .seconds(60), "a retry and a dead letter") {
                    let delayed = try await fixture.queue.stats().delayed
                    let dead = try await fixture.queue.deadLetterCount()
                    return delayed == 1 && dead == 1
                }
            }
            let retry = try #require(try await fixture.queue.delayedJobs(from: 0, count: 10).first?.job)
            #expect(retry.failedOn == ["apns", "fcm"])
            #expect(retry.lastError == "2 pushes failed")
            let letter = try #require(try await fixture.queue.deadLetters().first)
            #expect(letter.job?.failedOn == ["webpush"])
        }
    }

    @Test func aLaterFailureReplacesThePlatformsAndOneNamingNoneClearsThem() async throws {
        try await withRedisServer { server in
            let fixture = QueueFixture(server: server)
            try await fixture.queue.ensureGroup()
            try await fixture.queue.enqueue(JobRequest(type: "t", payload: Array("x".utf8)))
            let first = try #require(try await fixture.queue.take(for: "c", count: 1).first.map { try $0.get() })
            try await fixture.queue.retry(first, after: .zero, error: "e1", platforms: ["apns"])
            #expect(try await fixture.queue.promoteDueRetries() == 1)
            let second = try #require(try await fixture.queue.take(for: "c", count: 1).first.map { try $0.get() })
            #expect(second.failedOn == ["apns"])
            try await fixture.queue.deadLetter(id: second.id, error: "e2", platforms: ["fcm"])
            #expect(try await fixture.queue.deadLetters().first?.job?.failedOn == ["fcm"])
            // Replayed and dead-lettered again by a failure that names no platform: none kept.
            let letter = try #require(try await fixture.queue.deadLetters().first)
            #expect(try await fixture.queue.replayDeadLetters(ids: [letter.id]) == 1)
            let third = try #require(try await fixture.queue.take(for: "c", count: 1).first.map { try $0.get() })
            try await fixture.queue.deadLetter(id: third.id, error: "e3")
            #expect(try await fixture.queue.deadLetters().first?.job?.failedOn == [])
        }
    }
}
