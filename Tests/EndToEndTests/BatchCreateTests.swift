import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

@testable import RichPushStorage

/// Many notifications created in one pipelined round trip: each draft has its own outcome (a
/// spent quota refuses that draft only), ids the counter handed out before are skipped as the
/// single create skips them, idempotency keys are claimed, completed and released together; on
/// one Redis and on a cluster.
@Suite("Notifications created in a batch")
struct BatchCreateTests {
    @Test func oneRedis() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            try await Self.exercise(redis: redis, keys: StorageKeys(prefix: String(uniqueKeyPrefix("batch").dropLast())))
            await redis.close()
        }
    }

    @Test func cluster() async throws {
        try await withRedisCluster { local in
            let cluster = RedisClusterClient(configuration: local.configuration)
            try await Self.exercise(
                redis: cluster, keys: StorageKeys(prefix: String(uniqueKeyPrefix("batch").dropLast()), partitions: 3, clusterSafe: true))
            await cluster.close()
        }
    }

    static func draft(_ creator: String, _ index: Int, quota: QuotaLimits? = nil, key: IdempotencyKey? = nil) -> NotificationDraft {
        var draft = NotificationDraft(
            message: "m\(index)", richType: .text, contentType: "text/plain", payload: Array("payload \(index)".utf8),
            creator: creator, target: "t\(index)", idempotency: key)
        draft.quota = quota
        return draft
    }

    static func exercise(redis: any RedisClient, keys: StorageKeys) async throws {
        let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix))
        let store = RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600), idBlock: 8)
        let hashing: ([UInt8]) -> String = { Hex.encode($0) }

        // 50 drafts, a quota of 30 a minute for one creator: 30 created, 20 refused, nothing of them stored.
        let quota = QuotaLimits(perMinute: 30, liveBytes: 0)
        let outcomes = try await store.create((0..<50).map { draft("alice", $0, quota: quota) }, hashing: hashing)
        #expect(outcomes.count == 50)
        let created = outcomes.compactMap { try? $0.get() }
        let refused = outcomes.compactMap { outcome -> QuotaRefusal? in
            guard case .failure(let error) = outcome else { return nil }
            return error as? QuotaRefusal
        }
        #expect(created.count == 30 && refused.count == 20)
        #expect(Set(created.map(\.id)).count == 30)
        // Each outcome is its own draft's: the record says the draft's message and target.
        for (index, outcome) in outcomes.enumerated() {
            if case .success(let record) = outcome { #expect(record.message == "m\(index)" && record.target == "t\(index)") }
        }
        let stored = try await store.notifications(createdBy: "alice", before: nil, limit: 100)
        #expect(Set(stored.map(\.id)) == Set(created.map(\.id)))
        var jobs = 0
        for partition in store.queues { jobs += try await partition.jobCount() }
        #expect(jobs == 30, "one job per created notification")

        // The counter goes back (a failover to a lagging replica): the ids it hands out again are
        // taken, and the batch moves past them to fresh ones without overwriting a record.
        try await redis.send("SET", keys.notificationSequence, 0)
        let fresh = try await RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600), idBlock: 8)
            .create((0..<20).map { draft("bob", $0) }, hashing: hashing)
        let freshIDs = fresh.compactMap { try? $0.get().id }
        #expect(freshIDs.count == 20)
        #expect(Set(freshIDs).isDisjoint(with: Set(created.map(\.id))))
        for record in stored { #expect(try await store.notification(id: record.id)?.creator == "alice") }

        // Idempotency keys claimed together: the first batch claims, the create completes them, the
        // same keys again answer with the same ids; a key used for another request is a mismatch.
        let keysOf = (0..<5).map { IdempotencyKey(user: "carol", key: "k\($0)", fingerprint: "f\($0)") }
        #expect(try await store.claim(keysOf) == Array(repeating: .claimed, count: 5))
        let keyed = try await store.create((0..<5).map { draft("carol", $0, key: keysOf[$0]) }, hashing: hashing).map { try $0.get().id }
        let again = try await store.claim(keysOf + [IdempotencyKey(user: "carol", key: "k0", fingerprint: "other")])
        #expect(again == keyed.map { .completed(notification: $0) } + [.mismatch])
        // Released together: only pending claims of the same request go.
        let loose = (5..<8).map { IdempotencyKey(user: "carol", key: "k\($0)", fingerprint: "f\($0)") }
        #expect(try await store.claim(loose).allSatisfy { $0 == .claimed })
        try await store.release(loose + keysOf)
        #expect(try await store.claim(loose).allSatisfy { $0 == .claimed })
        #expect(try await store.claim(keysOf).allSatisfy { if case .completed = $0 { true } else { false } })

        // More than one script call holds (100 a call, per partition): every draft gets its own
        // notification and job, in order.
        let many = try await store.create((0..<250).map { draft("dave", $0) }, hashing: hashing).map { try $0.get() }
        #expect(many.map(\.message) == (0..<250).map { "m\($0)" })
        #expect(Set(many.map(\.id)).count == 250)
        var allJobs = 0
        for partition in store.queues { allJobs += try await partition.jobCount() }
        #expect(allJobs == 30 + 20 + 5 + 250)
        // Written once a call, the payload (one content) and the creator's index expire all the same.
        let same = try await store.create(
            (0..<150).map { index in
                NotificationDraft(
                    message: "s\(index)", richType: .text, contentType: "text/plain", payload: Array("same".utf8), creator: "erin",
                    target: "t")
            }, hashing: hashing
        ).map { try $0.get() }
        #expect(try await store.payload(hash: same[0].payloadHash, notification: same[0].id) == Array("same".utf8))
        for partition in 0..<keys.partitions {
            let inPartition = keys.inPartition(partition)
            #expect(
                (1...600).contains(try await redis.send("TTL", inPartition.created(by: "erin")).int ?? -1),
                "index of partition \(partition)")
            #expect(
                (1...600).contains(try await redis.send("TTL", inPartition.payload(same[0].payloadHash)).int ?? -1),
                "payload in partition \(partition)")
        }
        #expect(try await store.notifications(createdBy: "erin", before: nil, limit: 200).count == 150)

        #expect(try await store.create([], hashing: hashing).isEmpty)
    }
}
