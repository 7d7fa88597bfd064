package import Hiredis
package import RichPushCore
import RichPushQueue

/// The delivery ledger in Redis, as the workers use it (``DeliveryLedger``): the records they
/// deliver and whether they were cancelled, each (notification, installation) pair leased before
/// its push and recorded after it with the device's entry in the status, expiries, the throttle's
/// minute gate, and what a dead letter marks failed and a replay takes back. One script call per
/// partition for a whole batch.
package struct RedisDeliveryLedger: DeliveryLedger {
    let redis: any RedisClient
    let keys: StorageKeys
    let retention: Duration
    /// Records read here, cached for a minute.
    let records: NotificationRecords

    package init(redis: any RedisClient, keys: StorageKeys, retention: Duration) {
        self.redis = redis
        self.keys = keys
        self.retention = retention
        self.records = NotificationRecords(redis: redis, keys: keys)
    }

    init(redis: any RedisClient, keys: StorageKeys, retention: Duration, records: NotificationRecords) {
        self.redis = redis
        self.keys = keys
        self.retention = retention
        self.records = records
    }

    /// Records by id in one pipelined round trip (cached ones cost none); missing ones are left out.
    package func notifications(ids: [Int]) async throws -> [RichNotification] {
        try await records.notifications(ids: ids)
    }

    package func recordPlannedFanOuts(_ planned: [Int: Int]) async throws {
        guard !planned.isEmpty else { return }
        try await redis.sendAll(planned.map { RedisCommand("HSET", keys.status($0.key), StatusField.planned.rawValue, $0.value) })
    }

    package func cancelled(among ids: [Int]) async throws -> Set<Int> {
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HGET", keys.status($0), StatusField.state.rawValue) })
        return Set(zip(ids, replies).compactMap { id, reply in reply.string == DeliveryState.cancelled.rawValue ? id : nil })
    }
}
