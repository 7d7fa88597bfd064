import Hiredis
import Testing

@testable import RichPushQueue

@Suite("Queue values, offline")
struct UnitTests {
    @Test func backoffGrowsExponentiallyUpToTheCap() {
        let policy = RetryPolicy(maxAttempts: 5, base: .milliseconds(100), cap: .seconds(1))
        #expect(policy.ceiling(afterAttempt: 1) == .milliseconds(100))
        #expect(policy.ceiling(afterAttempt: 2) == .milliseconds(200))
        #expect(policy.ceiling(afterAttempt: 4) == .milliseconds(800))
        #expect(policy.ceiling(afterAttempt: 5) == .seconds(1))
        #expect(policy.ceiling(afterAttempt: 500) == .seconds(1))
    }

    @Test func fullJitterStaysWithinZeroAndTheCeiling() {
        let policy = RetryPolicy(base: .milliseconds(100), cap: .seconds(10))
        #expect(policy.delay(afterAttempt: 3) { _ in 0 } == .zero)
        #expect(policy.delay(afterAttempt: 3) { _ in 1 } == .milliseconds(400))
        #expect(policy.delay(afterAttempt: 3) { _ in 0.5 } == .milliseconds(200))
        for _ in 0..<100 {
            let delay = policy.delay(afterAttempt: 3)
            #expect(delay >= .zero && delay <= .milliseconds(400))
        }
    }

    @Test func attemptsAreBoundedByMaxAttempts() {
        let policy = RetryPolicy(maxAttempts: 3)
        #expect(policy.allowsRetry(afterAttempt: 1))
        #expect(policy.allowsRetry(afterAttempt: 2))
        #expect(!policy.allowsRetry(afterAttempt: 3))
    }

    @Test func jobEntryDecodesAndLaterFieldsWin() throws {
        let entry = RedisValue.array([
            .bulk(Array("5-1".utf8)),
            .array(
                [
                    "v", "1", "type", "probe", "payload", "abc", "enq", "1700000000000", "err", "old", "attempt", "2", "origin", "1-0",
                    "err", "new",
                ].map { .bulk(Array($0.utf8)) }),
        ])
        let job = try Job(entry: entry)
        #expect(job.id == "5-1" && job.type == "probe" && job.payload == Array("abc".utf8))
        #expect(job.attempt == 2 && job.origin == "1-0" && job.lastError == "new" && job.enqueuedAt == 1_700_000_000_000)
    }

    @Test(arguments: [
        (["type", "probe", "payload", "x", "enq", "1"], "missing encoding version"),
        (["v", "9", "type", "probe", "payload", "x", "enq", "1"], "unsupported encoding version 9"),
        (["v", "1", "payload", "x", "enq", "1"], "missing job type"),
        (["v", "1", "type", "probe", "enq", "1"], "missing payload"),
        (["v", "1", "type", "probe", "payload", "x", "enq", "soon"], "enqueue time"),
    ])
    func undecodableEntriesSayWhy(fields: [String], reason: String) {
        let entry = RedisValue.array([.bulk(Array("7-0".utf8)), .array(fields.map { .bulk(Array($0.utf8)) })])
        #expect {
            _ = try Job(entry: entry)
        } throws: { error in
            let error = try #require(error as? JobDecodingError)
            return error.id == "7-0" && error.reason.contains(reason)
        }
    }

    @Test func streamIDsOrderAsRedisDoes() throws {
        #expect(try #require(StreamID("5-10")) > #require(StreamID("5-9")))
        #expect(try #require(StreamID("6")) > #require(StreamID("5-99")))
        #expect(StreamID("x-1") == nil && StreamID("1-y") == nil)
    }

    @Test func keysOfOnePartitionShareOneHashTag() {
        let configuration = JobQueueConfiguration(prefix: "rp", partition: "q3")
        for key in [
            configuration.streamKey, configuration.delayedKey, configuration.deadKey, configuration.countersKey,
            configuration.idempotencyKey("k"),
        ] {
            #expect(key.hasPrefix("rp:{q3}:"))
        }
    }
}
