import Crypto
import Foundation
package import Hiredis
package import RichPushCore
package import RichPushQueue

/// Rich notifications in Redis, as the API uses them: a hash per record, payload bytes once per
/// content hash, status counters, all with the retention TTL; created together with their
/// delivery job in one script, so a job never exists without its record nor a record without its
/// job; cancels, reads, fetches and receipts. What the workers write while delivering is
/// ``RedisDeliveryLedger``'s.
package struct RedisNotificationStore: NotificationStore {
    let redis: any RedisClient
    let keys: StorageKeys
    let queue: JobQueue
    /// The queue of each partition (index as in ``StorageKeys/partitionNames``).
    package let queues: [JobQueue]
    let retention: Duration
    let durability: Durability
    let payloads: ContentCache<String, [UInt8]>
    /// Records read or created here, cached for a minute.
    let records: NotificationRecords
    let ids: IDBlocks
    /// Single creates made at the same time, sent together.
    let concurrentCreates: Coalescer<HashedDraft, RichNotification>

    /// The delivery ledger over the same Redis and keys (what the workers write), for tools and
    /// tests that hold this store.
    package var ledger: RedisDeliveryLedger { RedisDeliveryLedger(redis: redis, keys: keys, retention: retention) }

    /// Most single-create batches in flight at once (see ``Coalescer``).
    static let createsInFlight = 4

    /// `payloadCacheBytes` bounds the in-process cache of payloads (immutable, by content hash);
    /// `idBlock` ids are reserved per INCRBY, so most creations cost one round trip, not two.
    package init(
        redis: any RedisClient, keys: StorageKeys, queue: JobQueue, retention: Duration,
        payloadCacheBytes: Int = 64 << 20, idBlock: Int = 64, durability: Durability = .primary
    ) {
        self.redis = redis
        self.durability = durability
        self.keys = keys
        self.queue = queue
        self.queues =
            keys.partitions == 1
            ? [queue]
            : keys.partitionNames.map { name in
                var configuration = queue.configuration
                configuration.partition = name
                return JobQueue(redis: queue.redis, configuration: configuration)
            }
        self.retention = retention
        self.payloads = ContentCache(budget: payloadCacheBytes, ttl: retention)
        self.records = NotificationRecords(redis: redis, keys: keys)
        self.ids = IDBlocks(key: keys.notificationSequence, schemaKey: keys.schemaVersion, block: idBlock)
        self.concurrentCreates = Coalescer(concurrency: Self.createsInFlight, maxBatch: Self.notificationsPerCall)
    }

    private init(_ other: RedisNotificationStore, app: AppID) {
        redis = other.redis
        durability = other.durability
        keys = other.keys.forApp(app)
        queue = other.queue
        queues = other.queues
        retention = other.retention
        payloads = other.payloads
        records = NotificationRecords(redis: other.redis, keys: other.keys.forApp(app))
        ids = other.ids
        concurrentCreates = Coalescer(concurrency: Self.createsInFlight, maxBatch: Self.notificationsPerCall)
    }

    /// The same store for `app`'s notifications. It shares this one's payload cache (payloads are
    /// read by content hash, only after the caller's access to the record that names the hash was
    /// checked, so one app's bytes reach another only when it holds the same bytes) and its id
    /// blocks (one sequence); its records are cached apart, as callers name them by id.
    package func forApp(_ app: AppID) -> RedisNotificationStore {
        app == keys.app ? self : RedisNotificationStore(self, app: app)
    }

    package func cancel(id: Int) async throws -> CancelOutcome {
        try Self.cancelOutcome(try await redis.run(Self.cancelScript, cancelCall(id: id, now: JobQueue.nowMilliseconds())))
    }

    /// Drops the records this process cached (a user was removed: their records are gone).
    package func dropCachedRecords() {
        records.cache.removeAll()
    }

    /// The record read from Redis, past this process's cache (which it refreshes): the API's
    /// reads by id do the same work whether a record was cached here, is someone else's or does
    /// not exist, so timing tells none of them apart. ``cachedNotification(id:)`` only looks.
    package func notification(id: Int) async throws -> RichNotification? {
        try await records.read(ids: [id])[id]
    }

    /// The record if this process has it cached; no round trip.
    package func cachedNotification(id: Int) -> RichNotification? {
        records.cache.value(for: id)
    }

    /// Records by id in one pipelined round trip (cached ones cost none); missing ones are left out.
    package func notifications(ids: [Int]) async throws -> [RichNotification] {
        try await records.notifications(ids: ids)
    }

    package func isReadable(id: Int, _ check: ReadCheck) async throws -> Bool {
        // The fetch's and the receipt's read check alone (a pair is in the ledger from its
        // lease, taken before the push: the device that got a push can fetch its payload, even
        // before the worker recorded the outcome).
        let call = ReadableCall(
            record: keys.notification(id), ledger: keys.ledger(id), reader: check.creator ?? "", addressees: check.addressees)
        return try await redis.run(Self.readableScript, call).int == 1
    }

    package func payload(hash: String, notification id: Int) async throws -> [UInt8]? {
        if let cached = payloads.value(for: hash) { return cached }
        let reply = try await redis.send("GET", keys.forNotification(id).payload(hash))
        guard !reply.isNull, let bytes = reply.bytes else { return nil }
        payloads.insert(bytes, for: hash, cost: bytes.count)
        return bytes
    }

    package func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification] {
        let max = before.map { "(\($0)" } ?? "+inf"
        // Each partition's newest, merged (ids grow in every partition as in all of them).
        let replies = try await redis.sendAll(
            (0..<keys.partitions).map {
                RedisCommand("ZREVRANGEBYSCORE", keys.inPartition($0).created(by: user), max, "-inf", "LIMIT", 0, limit)
            })
        let ids = replies.flatMap { ($0.array ?? []).compactMap(\.int) }.sorted(by: >).prefix(limit)
        return try await notifications(ids: Array(ids))
    }

    /// The counters and state (``StoredStatus``, the state derived from both), and each device's
    /// entry: in its ledger value once an outcome is recorded, else in the devices hash (values
    /// written before the entries moved into the ledger, receipts and revivals of pairs with no
    /// outcome yet); a pair with neither is not listed.
    package func status(id: Int) async throws -> NotificationStatus? {
        let names = StoredStatus.allFields
        let replies = try await redis.sendAll([
            RedisCommand("HMGET", arguments: [keys.notification(id)] + names),
            RedisCommand("HGETALL", keys.ledger(id)), RedisCommand("HGETALL", keys.devices(id)),
        ])
        let stored = StoredStatus(record: StoredStatus.fields(names, of: replies[0]))
        guard stored.state != nil else { return nil }
        let counts = Dictionary(uniqueKeysWithValues: DeliveryCounter.allCases.map { ($0.rawValue, stored.counts[$0] ?? 0) })
        var entries = Self.pairs(replies[2])
        for (installation, value) in Self.pairs(replies[1]) where value.count > 1 && value[1] == UInt8(ascii: "{") {
            entries[installation] = Array(value.dropFirst())
        }
        var devices: [NotificationStatus.Device] = []
        for (installation, bytes) in entries {
            if let device = Self.device(installation, entry: bytes) { devices.append(device) }
        }
        return NotificationStatus(
            id: id, state: stored.derived, counts: counts, devices: devices.sorted { $0.installation < $1.installation })
    }

    /// A hash's fields and values, from HGETALL's reply.
    private static func pairs(_ reply: RedisValue) -> [String: [UInt8]] {
        let flat = reply.array ?? []
        var pairs: [String: [UInt8]] = [:]
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            if let field = flat[index].string, let value = flat[index + 1].bytes { pairs[field] = value }
        }
        return pairs
    }

    package func recordFetch(id: Int, installation: String?, reader: String, if check: ReadCheck?) async throws -> Bool {
        // One round trip: the read check (when asked), then count the first fetch per device (or
        // per reader): its counter is what makes the state `fetched`.
        let keys = self.keys.forNotification(id)
        let call = FetchCall(
            fetchedBy: keys.fetchedBy(id), status: keys.notification(id), record: keys.notification(id), webhookWants: keys.webhookWants,
            webhookOutbox: keys.webhookOutbox, ledger: self.keys.ledger(id), devices: keys.devices(id),
            fetcher: installation.map { "i:\($0)" } ?? "u:\(reader)",
            ttl: Int(retention.components.seconds), counter: DeliveryCounter.fetched.rawValue, id: id,
            now: JobQueue.nowMilliseconds(), item: NotificationLua.eventItem(installation: installation, reader: reader),
            check: check == nil ? "0" : "1", reader: check?.creator ?? "", addressees: check?.addressees ?? [])
        return try await redis.run(Self.fetchScript, call).int == 1
    }

    /// One script: the read check (when asked), then counts the receipt once per (kind,
    /// installation or reader), sets the device's state in its entry (keeping what the delivery
    /// recorded there, such as the platform's id); its counter moves the (derived) state on.
    package func recordReceipt(
        id: Int, kind: ReceiptKind, installation: String?, reader: String, if check: ReadCheck?
    ) async throws -> ReceiptOutcome {
        let who = installation.map { "i:\($0)" } ?? "u:\(reader)"
        let keys = self.keys.forNotification(id)
        let call = ReceiptCall(
            status: keys.notification(id), devices: keys.devices(id), receipts: keys.receipts(id), record: keys.notification(id),
            webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ledger: self.keys.ledger(id), counter: kind.rawValue,
            installation: installation ?? "", ttl: Int(retention.components.seconds),
            identity: "\(kind.rawValue):\(who)", id: id, now: JobQueue.nowMilliseconds(),
            item: NotificationLua.eventItem(installation: installation, reader: reader),
            check: check == nil ? "0" : "1", reader: check?.creator ?? "", addressees: check?.addressees ?? [])
        let reply = try await redis.run(Self.receiptScript, call)
        switch reply.int {
        case 1: return .counted
        case -1: return .unreadable
        default: return .duplicate
        }
    }

}

/// How sure a created notification is to outlive its master.
package enum Durability: Sendable, Hashable {
    /// Acknowledged once the master has it (with `appendfsync everysec`, up to a second of writes
    /// can be lost with the master's machine, or more with a failover to a lagging replica).
    case primary
    /// Acknowledged once `replicas` replicas have it too (`WAIT`), or 503 after `timeout`.
    case replicated(replicas: Int, timeout: Duration)
}
