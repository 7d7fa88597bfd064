import Hiredis
import RichPushCore

/// Notification records as the API's store and the workers' ledger read them: one pipelined
/// HMGET per batch, and a cache of a minute in each process (records never change; a removed
/// user's are dropped with ``RedisNotificationStore/dropCachedRecords()``).
struct NotificationRecords: Sendable {
    let redis: any RedisClient
    let keys: StorageKeys
    let cache: ContentCache<Int, RichNotification>

    init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
        self.cache = ContentCache(budget: 100_000, ttl: .seconds(60))
    }

    /// The records of `app`, in the same cache: notification ids are the deployment's (one
    /// sequence), so one id is one app's record. Only for a reader that never takes an id from a
    /// caller (the workers' ledger: a job names its app); the API keeps a cache per app.
    func forApp(_ app: AppID) -> NotificationRecords {
        NotificationRecords(redis: redis, keys: keys.forApp(app), cache: cache)
    }

    private init(redis: any RedisClient, keys: StorageKeys, cache: ContentCache<Int, RichNotification>) {
        self.redis = redis
        self.keys = keys
        self.cache = cache
    }

    /// Records by id in one pipelined round trip (cached ones cost none); missing ones are left out.
    func notifications(ids: [Int]) async throws -> [RichNotification] {
        var found: [Int: RichNotification] = [:]
        let missing = ids.filter { id in
            guard let cached = cache.value(for: id) else { return true }
            found[id] = cached
            return false
        }
        if !missing.isEmpty {
            found.merge(try await read(ids: missing)) { _, read in read }
        }
        return ids.compactMap { found[$0] }
    }

    /// Records read from Redis in one pipelined round trip, and cached.
    func read(ids: [Int]) async throws -> [Int: RichNotification] {
        let replies = try await redis.sendAll(ids.map { RedisCommand("HMGET", arguments: [keys.notification($0)] + Self.fields) })
        var found: [Int: RichNotification] = [:]
        for (id, reply) in zip(ids, replies) {
            if let record = parse(id, reply.array ?? []) { found[id] = record }
        }
        return found
    }

    /// Records by id, as ``notifications(ids:)``, with the state each one's status stores now
    /// (it lives in the record's hash): read with an uncached record, alone for a cached one; one
    /// pipelined round trip. A record with no state there (gone) is not in `states`.
    func notificationsWithStates(ids: [Int]) async throws -> (records: [RichNotification], states: [Int: String]) {
        var found: [Int: RichNotification] = [:]
        var cached: [Int] = [], missing: [Int] = []
        for id in Set(ids) {
            if let record = cache.value(for: id) {
                found[id] = record
                cached.append(id)
            } else {
                missing.append(id)
            }
        }
        let state = StatusField.state.rawValue
        let replies = try await redis.sendAll(
            cached.map { RedisCommand("HGET", keys.notification($0), state) }
                + missing.map { RedisCommand("HMGET", arguments: [keys.notification($0)] + Self.fields + [state]) })
        var states: [Int: String] = [:]
        for (id, reply) in zip(cached, replies) {
            if let value = reply.string { states[id] = value }
        }
        for (id, reply) in zip(missing, replies.dropFirst(cached.count)) {
            let fields = reply.array ?? []
            guard fields.count == Self.fields.count + 1, let record = parse(id, Array(fields.dropLast())) else { continue }
            found[id] = record
            if let value = fields.last?.string { states[id] = value }
        }
        return (ids.compactMap { found[$0] }, states)
    }

    /// The record fields a reader reads (HMGET), in the order ``parse(_:_:)`` takes them.
    static let fields = RecordField.read.map(\.rawValue)

    /// A record from its ``fields`` (nil: no record, or one missing what every record has), cached.
    private func parse(_ id: Int, _ values: [RedisValue]) -> RichNotification? {
        guard values.count == RecordField.read.count else { return nil }
        let field = Dictionary(uniqueKeysWithValues: zip(RecordField.read, values))
        guard let message = field[.message]?.string, let type = field[.type]?.string, let contentType = field[.contentType]?.string,
            let hash = field[.payload]?.string, let creator = field[.creator]?.string, let target = field[.target]?.string
        else { return nil }
        // A native payload that cannot be read is no record: rendered instead, it would reach
        // devices the sender did not write for.
        var native: NativePush?
        if let stored = field[.native]?.bytes {
            guard let read = NativePush(json: stored) else { return nil }
            native = read
        }
        let delivery = DeliveryOptions(
            ttl: field[.ttl]?.int.map { .seconds($0) }, collapseID: field[.collapse]?.string,
            priority: field[.priority]?.string.flatMap(DeliveryOptions.Priority.init), throttlePerMinute: field[.throttle]?.int,
            mode: field[.mode]?.string.flatMap(PushRenderer.Mode.init))
        var record = RichNotification(
            id: id, message: message, richType: RichType(rawValue: type), contentType: contentType, payloadHash: hash,
            payloadSize: field[.size]?.int ?? 0, creator: creator, target: target, createdAt: Int64(field[.created]?.int ?? 0),
            delivery: delivery, properties: Self.properties(field[.properties]?.bytes, defaultLocale: field[.locale]?.string),
            native: native)
        record.templatesOnly = field[.templatesOnly]?.int == 1
        cache.insert(record, for: id, cost: 1)
        return record
    }

    /// A record's template properties (no field: none). Checked when the send was accepted, so
    /// unreadable ones are a bug or a tampered record: read as none, the devices get the plain push.
    static func properties(_ stored: [UInt8]?, defaultLocale: String? = nil) -> SendProperties? {
        guard let stored else { return nil }
        do {
            var properties = try SendProperties.parse(json: stored)
            properties.defaultLocale = defaultLocale
            return properties
        } catch {
            return nil
        }
    }
}
