import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

@testable import RichPushStorage

/// A notification's quota is charged in the step that creates it: in the create's own script on
/// one Redis, in a call of its own first on a cluster (its keys are in another slot). Either way a
/// refusal creates nothing, and a create that is not charged leaves no quota keys.
@Suite("Quota charged with the create")
struct QuotaChargeTests {
    @Test func oneRedis() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            try await Self.exercise(redis: redis, keys: StorageKeys(prefix: String(uniqueKeyPrefix("quota").dropLast())))
            await redis.close()
        }
    }

    @Test func cluster() async throws {
        try await withRedisCluster { local in
            let cluster = RedisClusterClient(configuration: local.configuration)
            try await Self.exercise(
                redis: cluster, keys: StorageKeys(prefix: String(uniqueKeyPrefix("quota").dropLast()), partitions: 3, clusterSafe: true))
            await cluster.close()
        }
    }

    static func exercise(redis: any RedisClient, keys: StorageKeys) async throws {
        let store = RedisNotificationStore(
            redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
            retention: .seconds(600))
        func draft(_ creator: String, _ limits: QuotaLimits?) -> NotificationDraft {
            var draft = NotificationDraft(
                message: "m", richType: .text, contentType: "text/plain", payload: Array(repeating: 0x61, count: 100),
                creator: creator, target: "t")
            draft.quota = limits
            return draft
        }
        func create(_ draft: NotificationDraft) async throws -> Result<Int, QuotaRefusal> {
            do {
                return .success(try await store.create(draft) { Hex.encode($0.prefix(8)) }.id)
            } catch let refusal as QuotaRefusal {
                return .failure(refusal)
            }
        }

        // One a minute, two at once: the third is refused with the wait, and nothing of it is
        // stored; the quota's own call sees the same bucket (a token comes back in a minute:
        // a busy machine takes seconds, not a minute, between these steps).
        let perMinute = QuotaLimits(perMinute: 1, burst: 2, liveBytes: 0)
        for _ in 0..<2 { #expect(try await create(draft("alice", perMinute)).get() > 0) }
        guard case .failure(let refusal) = try await create(draft("alice", perMinute)) else {
            Issue.record("the third notification in a minute was created")
            return
        }
        #expect(refusal.message.contains("1 notifications per minute, at most 2 at once") && (1...60).contains(refusal.retryAfter))
        #expect(try await store.chargeQuota(user: "alice", bytes: 1, limits: perMinute) != nil)
        #expect(try await store.notifications(createdBy: "alice", before: nil, limit: 10).count == 2)

        // 250 live bytes: two payloads of 100 fit, the third is refused.
        let liveBytes = QuotaLimits(perMinute: 0, liveBytes: 250)
        for _ in 0..<2 { #expect(try await create(draft("bob", liveBytes)).get() > 0) }
        guard case .failure(let bytesRefusal) = try await create(draft("bob", liveBytes)) else {
            Issue.record("a payload past the live-bytes limit was created")
            return
        }
        #expect(bytesRefusal.message.contains("250 bytes"))
        #expect(try await store.notifications(createdBy: "bob", before: nil, limit: 10).count == 2)
        // The same quota keys as the quota's own call: it sees what the creates charged.
        #expect(try await store.chargeQuota(user: "bob", bytes: 100, limits: liveBytes) != nil)
        #expect(try await store.chargeQuota(user: "bob", bytes: 50, limits: liveBytes) == nil)

        // No limit (nil, or both 0): created, and no quota key written for the user.
        for limits in [nil, QuotaLimits(perMinute: 0, liveBytes: 0)] as [QuotaLimits?] {
            for _ in 0..<3 { #expect(try await create(draft("carol", limits)).get() > 0) }
        }
        #expect(try await store.notifications(createdBy: "carol", before: nil, limit: 10).count == 6)
        for key in [keys.quotaBucket("carol"), keys.quotaBytes("carol"), keys.quotaBytesLedger("carol")] {
            #expect(try await redis.send("EXISTS", key).int == 0, "\(key)")
        }
    }

    /// The rate is a token bucket: `burst` at once, then the per-minute rate; a bucket left alone
    /// fills up to `burst` and no further. Time is moved by rewriting when the bucket was last
    /// charged (`at`, milliseconds), not by waiting.
    @Test func theRateIsATokenBucket() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("bucket").dropLast()))
            let store = RedisNotificationStore(
                redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                retention: .seconds(600))
            // 6 a minute (one each 10 s), 5 at once.
            let limits = QuotaLimits(perMinute: 6, burst: 5, liveBytes: 0)
            func charges(_ count: Int) async throws -> [QuotaRefusal?] {
                try await store.chargeQuotas(user: "alice", bytes: Array(repeating: 1, count: count), limits: limits)
            }
            let first = try await charges(7)
            #expect(first.prefix(5).allSatisfy { $0 == nil }, "five at once")
            #expect(first.suffix(2).allSatisfy { $0?.limit == .perMinute && (1...10).contains($0?.retryAfter ?? 0) }, "\(first)")
            #expect(first.last??.message.contains("6 notifications per minute, at most 5 at once") == true)

            // 22 s after it was emptied: two tokens back (and a fifth), not five. A stall of the
            // machine of 8 s between these lines would make it three.
            let bucket = keys.quotaBucket("alice")
            try await redis.send("HSET", bucket, "tokens", "0", "at", JobQueue.nowMilliseconds() - 22_000)
            let later = try await charges(3)
            #expect(later.map { $0 == nil } == [true, true, false], "\(later)")

            // An hour later: full, five and no more.
            try await redis.send("HSET", bucket, "tokens", "0", "at", JobQueue.nowMilliseconds() - 3_600_000)
            let full = try await charges(6)
            #expect(full.map { $0 == nil } == [true, true, true, true, true, false], "\(full)")
            // It expires once it would be full again (50 s at one each 10 s, and a second more).
            #expect((1...51_000).contains(try await redis.send("PTTL", bucket).int ?? 0))
            await redis.close()
        }
    }
}
