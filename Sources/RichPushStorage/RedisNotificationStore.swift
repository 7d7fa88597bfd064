import Crypto
import Foundation
import Synchronization
public import Hiredis
public import RichPushCore
public import RichPushQueue

/// Rich notifications in Redis: a hash per record, payload bytes once per content hash, status
/// counters, all with the retention TTL; created together with their delivery job in one
/// script, so a job never exists without its record nor a record without its job.
public struct RedisNotificationStore: NotificationStore, DeliveryLedger {
    let redis: any RedisClient
    let keys: StorageKeys
    let queue: JobQueue
    let retention: Duration
    private let payloads: ContentCache<String, [UInt8]>
    private let records: ContentCache<Int, RichNotification>
    private let ids: IDBlocks

    /// `payloadCacheBytes` bounds the in-process cache of payloads (immutable, by content hash);
    /// `idBlock` ids are reserved per INCRBY, so most creations cost one round trip, not two.
    public init(redis: any RedisClient, keys: StorageKeys, queue: JobQueue, retention: Duration,
                payloadCacheBytes: Int = 64 << 20, idBlock: Int = 64) {
        self.redis = redis
        self.keys = keys
        self.queue = queue
        self.retention = retention
        self.payloads = ContentCache(budget: payloadCacheBytes, ttl: retention)
        self.records = ContentCache(budget: 100_000, ttl: .seconds(60))
        self.ids = IDBlocks(key: keys.notificationSequence, block: idBlock)
    }

    public func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification {
        let hash = hashing(draft.payload)
        let ttl = Int(retention.components.seconds)
        // An id whose record exists (the counter went back: AOF everysec, a failover to a lagging
        // replica) is refused by the script; the rest of that block is dropped and a new one taken.
        for _ in 0..<Self.maxIDAttempts {
            let id = try await ids.next(redis)
            let now = JobQueue.nowMilliseconds()
            let record = RichNotification(id: id, message: draft.message, richType: draft.richType, contentType: draft.contentType,
                                          payloadHash: hash, payloadSize: draft.payload.count, creator: draft.creator, target: draft.target, createdAt: now,
                                          delivery: draft.delivery)
            let job = queue.enqueueFields(for: RichPushJob.request(notification: id), now: now)
            var fields: [any RedisArgument] = ["message", record.message, "type", record.richType.rawValue, "contentType", record.contentType,
                                               "payload", hash, "size", record.payloadSize, "creator", record.creator, "target", record.target,
                                               "created", now]
            // Only what the sender set: records without options stay as small as before.
            if let ttl = draft.delivery.ttl { fields += ["ttl", Int(ttl.components.seconds)] }
            if let collapse = draft.delivery.collapseID { fields += ["collapse", collapse] }
            if let priority = draft.delivery.priority { fields += ["priority", priority.rawValue] }
            if let sendAt = draft.sendAt, sendAt > now { fields += ["sendAt", sendAt] }
            if let throttle = draft.delivery.throttlePerMinute { fields += ["throttle", throttle] }
            // With an idempotency key, the same script completes it: no crash can leave a created
            // notification whose key a retry would not find.
            let idempotency: (key: String, ttl: Int)? = draft.idempotency.map { (idempotencyKey($0), Int(IdempotencyKey.lifetime.components.seconds)) }
            // A send in the future waits in the queue's delayed set, where due retries wait: the
            // workers' maintenance moves it into the stream when its time comes.
            let sendAt = draft.sendAt.flatMap { $0 > now ? $0 : nil }
            let created = try await redis.run(Self.createScript,
                                              keys: [keys.payload(hash), keys.notification(id), keys.status(id), keys.created(by: record.creator), job.stream,
                                                     queue.configuration.delayedKey] + (idempotency.map { [$0.key] } ?? []),
                                              arguments: [ttl, id, draft.payload, (sendAt == nil ? DeliveryState.queued : .scheduled).rawValue, fields.count,
                                                          idempotency?.ttl ?? 0, sendAt ?? 0] + fields + job.fields)
            guard created.int == 1 else {
                ids.discardBlock()
                continue
            }
            payloads.insert(draft.payload, for: hash, cost: draft.payload.count)
            records.insert(record, for: id, cost: 1)
            return record
        }
        throw RedisError(code: .unexpectedReply, message: "\(Self.maxIDAttempts) notification ids in a row were taken: the id counter went back")
    }

    static let maxIDAttempts = 200

    /// KEYS: payload, record, status, creator's index, job stream, delayed set, and optionally the
    /// idempotency key it completes. ARGV: ttl, id, payload bytes, initial state, n, the
    /// idempotency key's ttl, send time (ms, 0: now), then n record field/value items, then the
    /// job's fields. Writes all of it, or nothing and 0 when the record exists: an id is never
    /// reused over an older notification.
    static let createScript = RedisScript("""
    if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
    local ttl, id = ARGV[1], ARGV[2]
    local n = tonumber(ARGV[5])
    redis.call('SET', KEYS[1], ARGV[3], 'EX', ttl)
    redis.call('HSET', KEYS[2], unpack(ARGV, 8, 7 + n))
    redis.call('EXPIRE', KEYS[2], ttl)
    redis.call('HSET', KEYS[3], 'state', ARGV[4])
    redis.call('EXPIRE', KEYS[3], ttl)
    redis.call('ZADD', KEYS[4], id, id)
    redis.call('EXPIRE', KEYS[4], ttl)
    -- The creator's index drops its oldest entries whose records expired, up to 2 per create,
    -- so it shrinks faster than it grows once records expire (the record keys share the
    -- partition's hash tag, hence the slot, with the index).
    local base = string.sub(KEYS[2], 1, #KEYS[2] - #id)
    for _ = 1, 2 do
      local oldest = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
      if oldest == nil or redis.call('EXISTS', base .. oldest) == 1 then break end
      redis.call('ZREM', KEYS[4], oldest)
    end
    if KEYS[7] then
      redis.call('HSET', KEYS[7], 'state', 'done', 'id', id)
      redis.call('EXPIRE', KEYS[7], ARGV[6])
    end
    if tonumber(ARGV[7]) > 0 then
      -- As a due retry is kept: the job's fields packed, scored by when it is due.
      redis.call('ZADD', KEYS[6], ARGV[7], cmsgpack.pack({unpack(ARGV, 8 + n, #ARGV)}))
    else
      redis.call('XADD', KEYS[5], '*', unpack(ARGV, 8 + n, #ARGV))
    end
    return 1
    """)

    public func cancel(id: Int) async throws -> CancelOutcome {
        let reply = try await redis.run(Self.cancelScript, keys: [keys.status(id), keys.notification(id), keys.webhookWants, keys.webhookOutbox],
                                        arguments: [id, JobQueue.nowMilliseconds()])
        switch reply.string {
        case nil: return .notFound
        case DeliveryState.cancelled.rawValue: return .alreadyCancelled
        case "ok": return .cancelled
        case let state?: return .tooLate(DeliveryState(rawValue: state) ?? .sent)
        }
    }

    /// KEYS: status, record, webhook wants, webhook outbox. ARGV: id, now ms. Cancels a
    /// notification none of whose pushes went out, or a split fan-out whose planned pushes have
    /// not all ended (its remaining batches then send nothing): "ok"; else its state (nil: none).
    static let cancelScript = RedisScript(webhookFunctions + """
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then return false end
    if state == 'cancelled' then return state end
    local planned = tonumber(redis.call('HGET', KEYS[1], 'planned') or '0')
    local ended = 0
    for _, counter in ipairs({'sent', 'held', 'invalidToken', 'failed'}) do
      ended = ended + tonumber(redis.call('HGET', KEYS[1], counter) or '0')
    end
    if state == 'accepted' or state == 'scheduled' or state == 'queued' or ended < planned then
      redis.call('HSET', KEYS[1], 'state', 'cancelled')
      if redis.call('EXISTS', KEYS[3]) == 1 then
        emit(KEYS[3], KEYS[4], redis.call('HGET', KEYS[2], 'creator'), ARGV[1], 'cancelled', ARGV[2], {'{}'})
      end
      return 'ok'
    end
    return state
    """)

    public func recordPlannedFanOuts(_ planned: [Int: Int]) async throws {
        guard !planned.isEmpty else { return }
        try await redis.sendAll(planned.map { RedisCommand("HSET", keys.status($0.key), "planned", $0.value) })
    }

    public func cancelled(among ids: [Int]) async throws -> Set<Int> {
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HGET", keys.status($0), "state") })
        return Set(zip(ids, replies).compactMap { id, reply in reply.string == DeliveryState.cancelled.rawValue ? id : nil })
    }

    private func idempotencyKey(_ key: IdempotencyKey) -> String {
        keys.idempotency(user: key.user, keyDigest: Hex.encode(SHA256.hash(data: Array(key.key.utf8))))
    }

    public func claim(_ key: IdempotencyKey) async throws -> IdempotencyClaim {
        let reply = try await redis.run(Self.claimScript, keys: [idempotencyKey(key)],
                                        arguments: [key.fingerprint, IdempotencyKey.claimLifetime.milliseconds])
        let parts = reply.array ?? []
        switch parts.first?.string {
        case "claimed": return .claimed
        case "mismatch": return .mismatch
        case "pending": return .inFlight(retryAfter: .milliseconds(max(1000, parts.dropFirst().first?.int ?? 1000)))
        case "done":
            guard let id = parts.dropFirst().first?.string.flatMap(Int.init) else { fallthrough }
            return .completed(notification: id)
        default:
            throw RedisError(code: .unexpectedReply, message: "unexpected idempotency claim reply \(reply)")
        }
    }

    public func release(_ key: IdempotencyKey) async throws {
        _ = try await redis.run(Self.releaseScript, keys: [idempotencyKey(key)], arguments: [key.fingerprint])
    }

    /// KEYS: the idempotency key. ARGV: fingerprint, claim lifetime in ms. Claims a free key
    /// (state pending, for the claim lifetime), or says who holds it: another request ("mismatch"),
    /// this request still being handled ("pending", ms left), or its notification ("done", id).
    static let claimScript = RedisScript("""
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then
      redis.call('HSET', KEYS[1], 'state', 'pending', 'fp', ARGV[1])
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
      return {'claimed'}
    end
    if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return {'mismatch'} end
    if state == 'pending' then return {'pending', redis.call('PTTL', KEYS[1])} end
    return {'done', redis.call('HGET', KEYS[1], 'id')}
    """)

    /// KEYS: the idempotency key. ARGV: fingerprint. Deletes a pending claim of this request.
    static let releaseScript = RedisScript("""
    if redis.call('HGET', KEYS[1], 'state') == 'pending' and redis.call('HGET', KEYS[1], 'fp') == ARGV[1] then
      return redis.call('DEL', KEYS[1])
    end
    return 0
    """)

    /// Drops the records this process cached (a user was removed: their records are gone).
    public func dropCachedRecords() {
        records.removeAll()
    }

    public func notification(id: Int) async throws -> RichNotification? {
        try await notifications(ids: [id]).first
    }

    /// Records by id in one pipelined round trip (cached ones cost none); missing ones are left out.
    public func notifications(ids: [Int]) async throws -> [RichNotification] {
        var found: [Int: RichNotification] = [:]
        let missing = ids.filter { id in
            guard let cached = records.value(for: id) else { return true }
            found[id] = cached
            return false
        }
        if !missing.isEmpty {
            let replies = try await redis.sendAll(missing.map {
                RedisCommand("HMGET", keys.notification($0), "message", "type", "contentType", "payload", "size", "creator", "target", "created",
                             "ttl", "collapse", "priority", "throttle")
            })
            for (id, reply) in zip(missing, replies) {
                guard let fields = reply.array, fields.count == 12, let message = fields[0].string, let type = fields[1].string,
                      let contentType = fields[2].string, let hash = fields[3].string, let creator = fields[5].string,
                      let target = fields[6].string else { continue }
                let delivery = DeliveryOptions(ttl: fields[8].int.map { .seconds($0) }, collapseID: fields[9].string,
                                               priority: fields[10].string.flatMap(DeliveryOptions.Priority.init), throttlePerMinute: fields[11].int)
                let record = RichNotification(id: id, message: message, richType: RichType(rawValue: type), contentType: contentType, payloadHash: hash,
                                              payloadSize: fields[4].int ?? 0, creator: creator, target: target, createdAt: Int64(fields[7].int ?? 0),
                                              delivery: delivery)
                records.insert(record, for: id, cost: 1)
                found[id] = record
            }
        }
        return ids.compactMap { found[$0] }
    }

    public func payload(hash: String) async throws -> [UInt8]? {
        if let cached = payloads.value(for: hash) { return cached }
        let reply = try await redis.send("GET", keys.payload(hash))
        guard !reply.isNull, let bytes = reply.bytes else { return nil }
        payloads.insert(bytes, for: hash, cost: bytes.count)
        return bytes
    }

    public func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification] {
        let max = before.map { "(\($0)" } ?? "+inf"
        let ids = (try await redis.send("ZREVRANGEBYSCORE", keys.created(by: user), max, "-inf", "LIMIT", 0, limit).array ?? []).compactMap(\.int)
        return try await notifications(ids: ids)
    }

    public func status(id: Int) async throws -> NotificationStatus? {
        let replies = try await redis.sendAll([RedisCommand("HGETALL", keys.status(id)), RedisCommand("HGETALL", keys.devices(id))])
        let flat = replies[0].array ?? []
        guard !flat.isEmpty else { return nil }
        var state = DeliveryState.accepted
        var counts: [String: Int] = Dictionary(uniqueKeysWithValues: DeliveryCounter.allCases.map { ($0.rawValue, 0) })
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let name = flat[index].string else { continue }
            if name == "state" {
                state = flat[index + 1].string.flatMap(DeliveryState.init) ?? state
            } else if counts[name] != nil {
                counts[name] = flat[index + 1].int ?? 0
            }
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

    public func recordFetch(id: Int, installation: String?, reader: String) async throws {
        // One round trip: count the first fetch per device (or per reader), move the state forward.
        try await redis.run(Self.fetchScript, keys: [keys.fetchedBy(id), keys.status(id), keys.notification(id), keys.webhookWants, keys.webhookOutbox],
                            arguments: [installation.map { "i:\($0)" } ?? "u:\(reader)", Int(retention.components.seconds), DeliveryCounter.fetched.rawValue,
                                        DeliveryState.fetched.rawValue, Self.stateOrder, id, JobQueue.nowMilliseconds(), Self.eventItem(installation: installation, reader: reader)])
    }

    static let stateOrder = DeliveryState.allCases.map(\.rawValue).joined(separator: ",")

    /// Lua: moves the state in hash `key` to `state` unless it is already further (order: "a,b,c").
    static let advanceFunction = """
    local function advance(key, state, order)
      local rank = {}
      local i = 0
      for name in string.gmatch(order, '[^,]+') do i = i + 1; rank[name] = i end
      local current = redis.call('HGET', key, 'state')
      if current == false or (rank[current] or 0) < rank[state] then
        redis.call('HSET', key, 'state', state)
      end
    end

    """

    /// KEYS: fetched-by set, status, record, webhook wants, webhook outbox. ARGV: fetcher, ttl,
    /// counter, state, state order, id, now ms, the webhook event's item.
    static let fetchScript = RedisScript(advanceFunction + webhookFunctions + """
    if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
      redis.call('EXPIRE', KEYS[1], ARGV[2])
      redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
      if redis.call('EXISTS', KEYS[4]) == 1 then
        emit(KEYS[4], KEYS[5], redis.call('HGET', KEYS[3], 'creator'), ARGV[6], 'fetched', ARGV[7], {ARGV[8]})
      end
    end
    advance(KEYS[2], ARGV[4], ARGV[5])
    return 1
    """)

    /// One script: counts the receipt once per (kind, installation or reader), sets the device's
    /// state in its entry (keeping what the delivery recorded there, such as the platform's id)
    /// and moves the state forward.
    public func recordReceipt(id: Int, kind: ReceiptKind, installation: String?, reader: String) async throws -> Bool {
        let who = installation.map { "i:\($0)" } ?? "u:\(reader)"
        return try await redis.run(Self.receiptScript, keys: [keys.status(id), keys.devices(id), keys.receipts(id), keys.notification(id),
                                                              keys.webhookWants, keys.webhookOutbox],
                                   arguments: [kind.rawValue, installation ?? "", kind.state.rawValue, Self.stateOrder,
                                               Int(retention.components.seconds), "\(kind.rawValue):\(who)", id, JobQueue.nowMilliseconds(),
                                               Self.eventItem(installation: installation, reader: reader)]).int == 1
    }

    /// KEYS: status, devices, receipts seen, record, webhook wants, webhook outbox. ARGV: counter,
    /// installation ('' for none), state, state order, ttl, receipt identity, id, now ms, the
    /// webhook event's item.
    static let receiptScript = RedisScript(advanceFunction + webhookFunctions + """
    if redis.call('SADD', KEYS[3], ARGV[6]) == 0 then return 0 end
    if redis.call('EXISTS', KEYS[5]) == 1 then
      emit(KEYS[5], KEYS[6], redis.call('HGET', KEYS[4], 'creator'), ARGV[7], ARGV[1], ARGV[8], {ARGV[9]})
    end
    if redis.call('TTL', KEYS[3]) < 0 then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
    redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
    if ARGV[2] ~= '' then
      local entry = {}
      local old = redis.call('HGET', KEYS[2], ARGV[2])
      if old then
        local ok, decoded = pcall(cjson.decode, old)
        if ok and type(decoded) == 'table' then entry = decoded end
      end
      entry['state'] = ARGV[1]
      redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(entry))
      if redis.call('TTL', KEYS[2]) < 0 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end
    end
    advance(KEYS[1], ARGV[3], ARGV[4])
    return 1
    """)

    public func wasAddressed(id: Int, to installations: [String]) async throws -> Bool {
        guard !installations.isEmpty else { return false }
        // A pair is in the ledger from its lease, taken before the push: the device that got a
        // push can fetch its payload, even before the worker recorded the outcome.
        var fields = RedisCommand("HMGET", keys.ledger(id))
        for installation in installations { fields.append(installation) }
        return try await redis.send(fields).array?.contains(where: { !$0.isNull }) ?? false
    }

    public func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        guard !keys.isEmpty else { return [] }
        let grouped = Dictionary(grouping: keys.indices, by: { keys[$0].notification })
        let order = Array(grouped.keys)
        // One script call for the whole batch: every ledger carries the partition's hash tag.
        var arguments: [any RedisArgument] = [owner, JobQueue.nowMilliseconds(), duration.milliseconds, Int(retention.components.seconds)]
        for id in order {
            let indices = grouped[id]!
            arguments.append(indices.count)
            for index in indices { arguments.append(keys[index].installation) }
        }
        let reply = try await redis.run(Self.leaseScript, keys: order.map { self.keys.ledger($0) }, arguments: arguments)
        let codes = reply.array ?? []
        guard codes.count == keys.count else { throw RedisError.unexpected(reply, expected: "\(keys.count) lease codes") }
        var leases = [DeliveryLease](repeating: .recorded, count: keys.count)
        for (index, code) in zip(order.flatMap { grouped[$0]! }, codes) {
            let value = code.int ?? 0
            leases[index] = value == -1 ? .leased : value == 0 ? .recorded : .leasedByOther(remaining: .milliseconds(value))
        }
        return leases
    }

    /// KEYS: the notifications' ledgers. ARGV: owner, now ms, lease ms, ttl s, then per ledger a
    /// count and that many installations. Per installation, in order: -1 leased to the caller,
    /// 0 already recorded, n > 0 another owner's lease is live for n ms. Fields hold `R`
    /// (recorded) or `L:<until ms>:<owner>` (leased).
    static let leaseScript = RedisScript("""
    local owner, now, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
    local out = {}
    local a = 5
    for k = 1, #KEYS do
      local ledger = KEYS[k]
      local count = tonumber(ARGV[a])
      for i = a + 1, a + count do
        local value = redis.call('HGET', ledger, ARGV[i])
        local code = -1
        if value == 'R' then
          code = 0
        elseif value then
          local untilMs, holder = string.match(value, '^L:(%d+):(.*)$')
          if untilMs and holder ~= owner and tonumber(untilMs) > now then code = tonumber(untilMs) - now end
        end
        if code == -1 then redis.call('HSET', ledger, ARGV[i], 'L:' .. (now + lease) .. ':' .. owner) end
        out[#out + 1] = code
      end
      if redis.call('TTL', ledger) < 0 then redis.call('EXPIRE', ledger, ARGV[4]) end
      a = a + count + 1
    end
    return out
    """)

    public func releaseLeases(_ keys: [DeliveryKey]) async throws {
        guard !keys.isEmpty else { return }
        let grouped = Dictionary(grouping: keys, by: \.notification)
        try await redis.sendAll(grouped.map { id, pairs in
            var command = RedisCommand("HDEL", self.keys.ledger(id))
            for pair in pairs { command.append(pair.installation) }
            return command
        })
    }

    /// Clears the ledger entries of notification `id`, for the given installations or for all,
    /// so that a forced replay pushes to them again. Returns how many entries existed.
    public func forgetDeliveries(id: Int, installations: [String]? = nil) async throws -> Int {
        guard let installations else {
            let count = try await redis.send("HLEN", keys.ledger(id)).int ?? 0
            try await redis.send("DEL", keys.ledger(id))
            return count
        }
        guard !installations.isEmpty else { return 0 }
        var command = RedisCommand("HDEL", keys.ledger(id))
        for installation in installations { command.append(installation) }
        return try await redis.send(command).int ?? 0
    }


    /// One script call per notification, all in one pipeline: counters, per-device entries (JSON
    /// written by hand: this runs for every push) and the state, in one step each.
    public func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws {
        var scriptKeys: [any RedisArgument] = [keys.webhookWants, keys.webhookOutbox]
        var arguments: [any RedisArgument] = [Int(retention.components.seconds), Self.stateOrder, JobQueue.nowMilliseconds()]
        for (id, results) in results where !results.isEmpty {
            var counts: [DeliveryCounter: Int] = [:]
            var devices: [any RedisArgument] = []
            var released: [any RedisArgument] = []
            for result in results {
                counts[result.counter, default: 0] += 1
                guard result.counter != .duplicateSuppressed else { continue }
                devices.append(result.installation)
                devices.append(Self.deviceEntry(state: result.counter.rawValue, adapterID: result.adapterID, error: result.error))
                if result.counter == .retried { released.append(result.installation) }
            }
            scriptKeys += [keys.status(id), keys.devices(id), keys.ledger(id), keys.notification(id)] as [any RedisArgument]
            arguments += [id, counts[.sent, default: 0] + counts[.held, default: 0] > 0 ? DeliveryState.sent.rawValue : "", counts.count, released.count, devices.count] as [any RedisArgument]
            for (counter, count) in counts { arguments.append(counter.rawValue); arguments.append(count) }
            arguments += released
            arguments += devices
        }
        guard scriptKeys.count > 2 else { return }
        // One script call for the whole batch (all keys carry the partition's hash tag).
        try await redis.run(Self.recordScript, keys: scriptKeys, arguments: arguments)
    }

    public func recordExpired(_ expired: [Int: [String]]) async throws {
        var scriptKeys: [any RedisArgument] = [keys.webhookWants, keys.webhookOutbox]
        var arguments: [any RedisArgument] = [Int(retention.components.seconds), JobQueue.nowMilliseconds()]
        for (id, installations) in expired where !installations.isEmpty {
            scriptKeys += [keys.status(id), keys.devices(id), keys.notification(id)] as [any RedisArgument]
            arguments += [id, installations.count] as [any RedisArgument]
            arguments += installations as [any RedisArgument]
        }
        guard scriptKeys.count > 2 else { return }
        try await redis.run(Self.expiredScript, keys: scriptKeys, arguments: arguments)
    }

    /// KEYS: webhook wants, webhook outbox, then (status, devices, record) per notification.
    /// ARGV: ttl, now ms, then per notification: id, n, n installations. Counts `expired`, marks
    /// each device's entry (keeping what it held), and emits the `expired` events a webhook wants.
    static let expiredScript = RedisScript(webhookFunctions + """
    local ttl, now = ARGV[1], ARGV[2]
    local hooks = redis.call('EXISTS', KEYS[1]) == 1
    local a = 3
    for k = 3, #KEYS, 3 do
      local status, devices, record = KEYS[k], KEYS[k + 1], KEYS[k + 2]
      local id, n = ARGV[a], tonumber(ARGV[a + 1])
      local items = {}
      if redis.call('EXISTS', status) == 1 then
        redis.call('HINCRBY', status, 'expired', n)
        for i = a + 2, a + 1 + n do
          local entry = {}
          local old = redis.call('HGET', devices, ARGV[i])
          if old then
            local ok, decoded = pcall(cjson.decode, old)
            if ok and type(decoded) == 'table' then entry = decoded end
          end
          entry['state'] = 'expired'
          local encoded = cjson.encode(entry)
          redis.call('HSET', devices, ARGV[i], encoded)
          items[#items + 1] = '{"installation":' .. cjson.encode(ARGV[i]) .. ',"result":' .. encoded .. '}'
        end
        if redis.call('TTL', devices) < 0 then redis.call('EXPIRE', devices, ttl) end
        if hooks then emit(KEYS[1], KEYS[2], redis.call('HGET', record, 'creator'), id, 'expired', now, items) end
      end
      a = a + 2 + n
    end
    return 1
    """)

    public func admitThrottled(_ batches: [ThrottledBatch]) async throws -> [Duration] {
        guard !batches.isEmpty else { return [] }
        var arguments: [any RedisArgument] = [JobQueue.nowMilliseconds()]
        for batch in batches { arguments += ["\(batch.batch):\(batch.pushes)", batch.pushes, batch.perMinute] as [any RedisArgument] }
        let reply = try await redis.run(Self.throttleScript, keys: batches.map { keys.throttle($0.notification) }, arguments: arguments)
        let waits = (reply.array ?? []).map { Duration.milliseconds($0.int ?? 0) }
        guard waits.count == batches.count else { throw RedisError.unexpected(reply, expected: "\(batches.count) waits") }
        return waits
    }

    /// KEYS: one throttle set per batch (a notification's may repeat). ARGV: now ms, then per
    /// batch: member (`<batch>:<pushes>`), pushes, limit per minute. Per batch: 0 when admitted
    /// (recorded at now, or already recorded), else ms until the oldest batches leave the minute
    /// and make room.
    static let throttleScript = RedisScript("""
    local now = tonumber(ARGV[1])
    local out = {}
    local a = 2
    for k = 1, #KEYS do
      local key, member, pushes, limit = KEYS[k], ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
      a = a + 3
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now - 60000)
      if redis.call('ZSCORE', key, member) then
        out[#out + 1] = 0
      else
        local entries = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
        local used = 0
        for i = 1, #entries, 2 do used = used + tonumber(string.match(entries[i], ':(%d+)$') or '0') end
        if used + pushes <= limit then
          redis.call('ZADD', key, now, member)
          redis.call('PEXPIRE', key, 61000)
          out[#out + 1] = 0
        else
          local freed, wait = 0, 60000
          for i = 1, #entries, 2 do
            freed = freed + tonumber(string.match(entries[i], ':(%d+)$') or '0')
            if used - freed + pushes <= limit then
              wait = tonumber(entries[i + 1]) + 60000 - now
              break
            end
          end
          out[#out + 1] = math.max(1, wait)
        end
      end
    end
    return out
    """)

    /// A webhook event's device part: `{"installation":…}`, or `{"reader":…}` for a reader with none.
    static func eventItem(installation: String?, reader: String) -> [UInt8] {
        var json = JSONWriter(capacity: 48)
        json.beginObject()
        if let installation { json.field("installation", installation) } else { json.field("reader", reader) }
        json.endObject()
        return json.bytes
    }

    /// A device's entry in the status: `{"adapterID":…,"error":…,"state":…}`.
    static func deviceEntry(state: String, adapterID: String? = nil, error: String? = nil) -> [UInt8] {
        var json = JSONWriter(capacity: 64)
        json.beginObject()
        if let adapterID { json.field("adapterID", adapterID) }
        if let error { json.field("error", error) }
        json.field("state", state)
        json.endObject()
        return json.bytes
    }

    /// KEYS: webhook wants, webhook outbox, then (status, devices, ledger, record) per
    /// notification. ARGV: ttl, state order, now ms, then per notification: id, state to advance
    /// to ('' for none), n, r, d, then n (counter, increment) pairs, r installations whose lease is
    /// released (retried), d items of (installation, entry) pairs. Every installation with an
    /// entry and not released is recorded in the ledger; the outcomes a webhook wants (sent and
    /// held as `sent`, `failed`, `invalidToken`) go into the outbox in the same step.
    static let recordScript = RedisScript(advanceFunction + webhookFunctions + """
    local ttl, order, now = ARGV[1], ARGV[2], ARGV[3]
    local hooks = redis.call('EXISTS', KEYS[1]) == 1
    local events = {sent = 'sent', held = 'sent', failed = 'failed', invalidToken = 'invalidToken'}
    local a = 4
    for k = 3, #KEYS, 4 do
      local status, devices, ledger, record = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      local id, state, n, r, d = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
      local i = a + 5
      for _ = 1, n do
        redis.call('HINCRBY', status, ARGV[i], ARGV[i + 1])
        i = i + 2
      end
      local released = {}
      for _ = 1, r do
        released[ARGV[i]] = true
        redis.call('HDEL', ledger, ARGV[i])
        i = i + 1
      end
      local last = i + d - 1
      if d > 0 then
        local recorded = {}
        for j = i, last, 2 do
          if not released[ARGV[j]] then
            recorded[#recorded + 1] = ARGV[j]
            recorded[#recorded + 1] = 'R'
          end
        end
        for j = i, last, 200 do
          redis.call('HSET', devices, unpack(ARGV, j, math.min(j + 199, last)))
        end
        redis.call('EXPIRE', devices, ttl)
        for j = 1, #recorded, 200 do
          redis.call('HSET', ledger, unpack(recorded, j, math.min(j + 199, #recorded)))
        end
        if #recorded > 0 then redis.call('EXPIRE', ledger, ttl) end
        if hooks then
          local byType = {}
          for j = i, last, 2 do
            local event = events[string.match(ARGV[j + 1], '"state":"(%a+)"') or '']
            if event and not released[ARGV[j]] then
              byType[event] = byType[event] or {}
              table.insert(byType[event], '{"installation":' .. cjson.encode(ARGV[j]) .. ',"result":' .. ARGV[j + 1] .. '}')
            end
          end
          local creator = redis.call('HGET', record, 'creator')
          for event, items in pairs(byType) do emit(KEYS[1], KEYS[2], creator, id, event, now, items) end
        end
      end
      if state ~= '' then advance(status, state, order) end
      a = last + 1
    end
    return 1
    """)

    /// Lua: `emit(wants, outbox, creator, id, event, now, items)` adds one outbox entry for the
    /// `items` (JSON objects, one per device) when a webhook wants `event` for `creator`.
    static let webhookFunctions = """
    local function emit(wants, outbox, creator, id, event, now, items)
      if not creator or #items == 0 then return end
      local w = redis.call('HMGET', wants, event .. ':' .. creator, event .. ':*')
      if tonumber(w[1] or '0') <= 0 and tonumber(w[2] or '0') <= 0 then return end
      redis.call('XADD', outbox, '*', 'n', id, 'u', creator, 't', event, 'at', now, 'e', '[' .. table.concat(items, ',') .. ']')
    end

    """
}

/// Notification ids reserved a block at a time with INCRBY: unique decimal integers, increasing
/// per process, with gaps between replicas' blocks; saves the INCR round trip on most creations.
final class IDBlocks: Sendable {
    private let key: String
    private let block: Int
    private let range = Mutex<(next: Int, end: Int)>((0, 0))

    init(key: String, block: Int) {
        self.key = key
        self.block = max(1, block)
    }

    /// Drops what is left of the current block (its ids were found taken).
    func discardBlock() {
        range.withLock { $0 = (0, 0) }
    }

    func next(_ redis: any RedisClient) async throws -> Int {
        if let id = take() { return id }
        let end = try await redis.send("INCRBY", key, block).int ?? 0
        return range.withLock { range in
            // Another task may have refilled meanwhile; keep whichever block has ids left.
            if range.next >= range.end { range = (end - block + 1, end + 1) }
            defer { range.next += 1 }
            return range.next
        }
    }

    private func take() -> Int? {
        range.withLock { range in
            guard range.next < range.end else { return nil }
            defer { range.next += 1 }
            return range.next
        }
    }
}
