import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushInMemory
import RichPushQueue
import Synchronization
import Testing

@testable import RichPushStorage

/// Many notifications cancelled at once (the console's "cancel all that match"): the cancel script
/// per notification, in pipelines of 500 grouped by partition, not a round trip each; one outcome
/// per id, in order, as the single cancel answers; on one Redis, on a cluster, and in memory.
@Suite("Notifications cancelled in a batch")
struct BatchCancelTests {
    @Test func oneRedis() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            try await Self.exercise(redis: redis, keys: StorageKeys(prefix: String(uniqueKeyPrefix("cancels").dropLast()), partitions: 3))
            await redis.close()
        }
    }

    @Test func cluster() async throws {
        try await withRedisCluster { local in
            let cluster = RedisClusterClient(configuration: local.configuration)
            try await Self.exercise(
                redis: cluster, keys: StorageKeys(prefix: String(uniqueKeyPrefix("cancels").dropLast()), partitions: 3, clusterSafe: true))
            await cluster.close()
        }
    }

    @Test func inMemory() async throws {
        let store = InMemoryNotifications()
        let ids = try await Self.schedule(store, count: 30)
        let outcomes = try await store.cancel(ids: [ids[0], 999_999] + ids + [ids[1]]).map { try $0.get() }
        #expect(outcomes == [.cancelled, .notFound] + [.alreadyCancelled] + Array(repeating: .cancelled, count: 29) + [.alreadyCancelled])
        for id in ids { #expect(try await store.status(id: id)?.state == .cancelled) }
        // The same rules as one at a time.
        #expect(try await store.cancel(id: ids[2]) == .alreadyCancelled)
        #expect(try await store.cancel(ids: []).isEmpty)
    }

    static func schedule(_ store: some NotificationStore, count: Int) async throws -> [Int] {
        let sendAt = JobQueue.nowMilliseconds() + 3_600_000
        let drafts = (0..<count).map { index in
            var draft = NotificationDraft(
                message: "m\(index)", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: "t")
            draft.sendAt = sendAt
            return draft
        }
        return try await store.create(drafts) { _ in "h" }.map { try $0.get().id }
    }

    static func exercise(redis: any RedisClient, keys: StorageKeys) async throws {
        let counting = CountingClient(redis)
        let store = RedisNotificationStore(
            redis: counting, keys: keys, queue: JobQueue(redis: counting, configuration: JobQueueConfiguration(prefix: keys.prefix)),
            retention: .seconds(600), idBlock: 500)
        // 1,600 scheduled sends over 3 partitions: each partition's ~533 take two pipelines of up to 500.
        let ids = try await schedule(store, count: 1600)
        #expect(Set(ids.map(keys.partitionIndex(ofNotification:))) == [0, 1, 2])
        // One already sent (too late), one cancelled before, one unknown id.
        let sent = ids[7]
        try await redis.send("HSET", keys.notification(sent), StatusField.state.rawValue, DeliveryState.sent.rawValue)
        #expect(try await store.cancel(id: ids[8]) == .cancelled)
        let unknown = (ids.max() ?? 0) + 3
        counting.reset()
        let outcomes = try await store.cancel(ids: ids + [unknown])
        let pipelines = counting.pipelines
        #expect(
            pipelines <= 12,
            "1,601 cancels in \(pipelines) pipelines (3 partitions × 2 batches of up to 500, and a script load per node), not one round trip each"
        )
        #expect(outcomes.count == ids.count + 1)
        for (index, outcome) in outcomes.enumerated() {
            let expected: CancelOutcome =
                switch index {
                case 7: .tooLate(.sent)
                case 8: .alreadyCancelled
                case ids.count: .notFound
                default: .cancelled
                }
            #expect(try outcome.get() == expected, "item \(index)")
        }
        for (index, id) in ids.enumerated() where index != 7 {
            #expect(try await store.status(id: id)?.state == .cancelled, "\(id)")
        }
        #expect(try await store.status(id: sent)?.state == .sent)
        #expect(try await store.cancel(ids: []).isEmpty)
    }
}

/// A client that counts the pipelines sent through it (a single command is a pipeline of one).
final class CountingClient: RedisClient {
    private let inner: any RedisClient
    private let count = Mutex(0)

    init(_ inner: any RedisClient) {
        self.inner = inner
    }

    var topology: RedisTopology { inner.topology }
    var pipelines: Int { count.withLock { $0 } }
    func reset() { count.withLock { $0 = 0 } }

    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        count.withLock { $0 += 1 }
        return try await inner.pipeline(commands)
    }
}
