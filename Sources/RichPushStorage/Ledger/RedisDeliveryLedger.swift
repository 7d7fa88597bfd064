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
        try await redis.sendAll(planned.map { RedisCommand("HSET", keys.notification($0.key), StatusField.planned.rawValue, $0.value) })
    }

    /// The records with their states in one round trip (``NotificationRecords/notificationsWithStates(ids:)``).
    package func notificationsToSend(ids: [Int]) async throws -> (records: [RichNotification], cancelled: Set<Int>) {
        let (found, states) = try await records.notificationsWithStates(ids: ids)
        let cancelledState = DeliveryState.cancelled.rawValue
        return (found, Set(states.filter { $0.value == cancelledState }.keys))
    }

    /// The same ledger for `app`'s notifications, sharing this one's cache of records (and its
    /// budget: a worker's memory does not grow with the apps it serves).
    package func forApp(_ app: AppID) -> RedisDeliveryLedger {
        app == keys.app
            ? self : RedisDeliveryLedger(redis: redis, keys: keys.forApp(app), retention: retention, records: records.forApp(app))
    }

    /// One script call per partition of the notifications in `items`, built by `call` from that
    /// partition's keys and its share of the items.
    func byPartition<Value, Call>(_ items: [Int: Value], _ call: (StorageKeys, [(Int, Value)]) -> Call) -> [Call] {
        Dictionary(grouping: items, by: { keys.partitionIndex(ofNotification: $0.key) })
            .map { call(keys.inPartition($0.key), $0.value.map { ($0.key, $0.value) }) }
    }

    func runAll<Call, Item>(_ script: LuaScript<Call, Item>, _ calls: [Call]) async throws {
        guard !calls.isEmpty else { return }
        for reply in try await redis.run(script, calls: calls) { try reply.throwingError() }
    }
}
