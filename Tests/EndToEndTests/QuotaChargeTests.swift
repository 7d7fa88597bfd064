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

        // Two a minute: the third is refused with the wait, and nothing of it is stored.
        let perMinute = QuotaLimits(perMinute: 2, liveBytes: 0)
        for _ in 0..<2 { #expect(try await create(draft("alice", perMinute)).get() > 0) }
        guard case .failure(let refusal) = try await create(draft("alice", perMinute)) else {
            Issue.record("the third notification in a minute was created")
            return
        }
        #expect(refusal.message.contains("2 notifications per minute") && (1...60).contains(refusal.retryAfter))
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
        #expect(try await store.chargeQuota(user: "alice", bytes: 1, perMinute: 2, liveBytes: 0) != nil)
        #expect(try await store.chargeQuota(user: "bob", bytes: 100, perMinute: 0, liveBytes: 250) != nil)
        #expect(try await store.chargeQuota(user: "bob", bytes: 50, perMinute: 0, liveBytes: 250) == nil)

        // No limit (nil, or both 0): created, and no quota key written for the user.
        for limits in [nil, QuotaLimits(perMinute: 0, liveBytes: 0)] as [QuotaLimits?] {
            for _ in 0..<3 { #expect(try await create(draft("carol", limits)).get() > 0) }
        }
        #expect(try await store.notifications(createdBy: "carol", before: nil, limit: 10).count == 6)
        for key in [keys.quotaRate("carol"), keys.quotaBytes("carol"), keys.quotaBytesLedger("carol")] {
            #expect(try await redis.send("EXISTS", key).int == 0, "\(key)")
        }
    }
}
