import Foundation
public import Hiredis
public import RichPushCore
public import RichPushQueue

/// Rich notifications in Redis: a hash per record, payload bytes once per content hash, status
/// counters, all with the retention TTL; created together with their delivery job in one
/// MULTI/EXEC, so a job never exists without its record nor a record without its job.
public struct RedisNotificationStore: NotificationStore {
    let redis: any RedisClient
    let keys: StorageKeys
    let queue: JobQueue
    let retention: Duration

    /// The job type the rich-push worker runs; its payload is the notification id in decimal.
    public static let jobType = "rich-push"

    public init(redis: any RedisClient, keys: StorageKeys, queue: JobQueue, retention: Duration) {
        self.redis = redis
        self.keys = keys
        self.queue = queue
        self.retention = retention
    }

    public func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification {
        let id = try await redis.send("INCR", keys.notificationSequence).int ?? 0
        let now = JobQueue.nowMilliseconds()
        let hash = hashing(draft.payload)
        let record = RichNotification(id: id, message: draft.message, richType: draft.richType, contentType: draft.contentType,
                                      payloadHash: hash, payloadSize: draft.payload.count, creator: draft.creator, target: draft.target, createdAt: now)
        let ttl = Int(retention.components.seconds)
        let results = try await redis.transaction([
            RedisCommand("SET", keys.payload(hash), draft.payload, "EX", ttl),
            RedisCommand("HSET", keys.notification(id), "message", record.message, "type", record.richType.rawValue,
                         "contentType", record.contentType, "payload", hash, "size", record.payloadSize,
                         "creator", record.creator, "target", record.target, "created", now),
            RedisCommand("EXPIRE", keys.notification(id), ttl),
            RedisCommand("HSET", keys.status(id), "state", DeliveryState.queued.rawValue),
            RedisCommand("EXPIRE", keys.status(id), ttl),
            RedisCommand("ZADD", keys.created(by: record.creator), id, id),
            RedisCommand("EXPIRE", keys.created(by: record.creator), ttl),
            queue.enqueueCommand(for: JobRequest(type: Self.jobType, payload: Array(String(id).utf8)), now: now),
        ])
        if let failed = results.first(where: { $0.errorMessage != nil }) { try failed.throwingError() }
        return record
    }

    public func notification(id: Int) async throws -> RichNotification? {
        try await notifications(ids: [id]).first
    }

    /// Records by id in one pipelined round trip; missing ones are left out.
    func notifications(ids: [Int]) async throws -> [RichNotification] {
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.pipeline(ids.map {
            RedisCommand("HMGET", keys.notification($0), "message", "type", "contentType", "payload", "size", "creator", "target", "created")
        })
        return zip(ids, replies).compactMap { id, reply in
            guard let fields = reply.array, fields.count == 8, let message = fields[0].string, let type = fields[1].string,
                  let contentType = fields[2].string, let hash = fields[3].string, let creator = fields[5].string,
                  let target = fields[6].string else { return nil }
            return RichNotification(id: id, message: message, richType: RichType(rawValue: type), contentType: contentType, payloadHash: hash,
                                    payloadSize: fields[4].int ?? 0, creator: creator, target: target, createdAt: Int64(fields[7].int ?? 0))
        }
    }

    public func payload(hash: String) async throws -> [UInt8]? {
        let reply = try await redis.send("GET", keys.payload(hash))
        return reply.isNull ? nil : reply.bytes
    }

    public func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification] {
        let max = before.map { "(\($0)" } ?? "+inf"
        let ids = (try await redis.send("ZREVRANGEBYSCORE", keys.created(by: user), max, "-inf", "LIMIT", 0, limit).array ?? []).compactMap(\.int)
        return try await notifications(ids: ids)
    }

    public func status(id: Int) async throws -> NotificationStatus? {
        let replies = try await redis.pipeline([RedisCommand("HGETALL", keys.status(id)), RedisCommand("HGETALL", keys.devices(id))])
        let flat = replies[0].array ?? []
        guard !flat.isEmpty else { return nil }
        var state = DeliveryState.accepted
        var counts: [String: Int] = Dictionary(uniqueKeysWithValues: DeliveryCounter.allCases.map { ($0.rawValue, 0) })
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let name = flat[index].string else { continue }
            if name == "state" { state = flat[index + 1].string.flatMap(DeliveryState.init) ?? state } else { counts[name] = flat[index + 1].int ?? 0 }
        }
        let deviceFlat = replies[1].array ?? []
        var devices: [NotificationStatus.Device] = []
        for index in stride(from: 0, to: deviceFlat.count - 1, by: 2) {
            guard let installation = deviceFlat[index].string, let bytes = deviceFlat[index + 1].bytes,
                  let info = try? JSONDecoder().decode([String: String].self, from: Data(bytes)) else { continue }
            devices.append(NotificationStatus.Device(installation: installation, state: info["state"] ?? "sent", adapterID: info["adapterID"], error: info["error"]))
        }
        return NotificationStatus(id: id, state: state, counts: counts, devices: devices.sorted { $0.installation < $1.installation })
    }

    public func recordFetch(id: Int, user: String) async throws {
        let first = try await redis.send("SADD", keys.fetchedBy(id), user).int == 1
        var commands = [RedisCommand("EXPIRE", keys.fetchedBy(id), Int(retention.components.seconds))]
        if first { commands.append(RedisCommand("HINCRBY", keys.status(id), DeliveryCounter.fetched.rawValue, 1)) }
        _ = try await redis.pipeline(commands)
        try await advance(id: id, to: .fetched)
    }

    public func recordReceipt(id: Int, kind: ReceiptKind, installation: String?) async throws {
        var commands = [RedisCommand("HINCRBY", keys.status(id), kind.rawValue, 1)]
        if let installation {
            let info = String(decoding: try JSONEncoder().encode(["state": kind.rawValue]), as: UTF8.self)
            commands.append(RedisCommand("HSET", keys.devices(id), installation, info))
        }
        _ = try await redis.pipeline(commands)
        try await advance(id: id, to: kind.state)
    }

    /// Moves the state forward, never back (one script: read, compare, write).
    private func advance(id: Int, to state: DeliveryState) async throws {
        try await redis.run(Self.advanceScript, keys: [keys.status(id)],
                            arguments: [state.rawValue, DeliveryState.allCases.map(\.rawValue).joined(separator: ",")])
    }

    static let advanceScript = RedisScript("""
    local order = {}
    local i = 0
    for name in string.gmatch(ARGV[2], '[^,]+') do i = i + 1; order[name] = i end
    local current = redis.call('HGET', KEYS[1], 'state')
    if current == false or (order[current] or 0) < order[ARGV[1]] then
      redis.call('HSET', KEYS[1], 'state', ARGV[1])
    end
    return 1
    """)
}
