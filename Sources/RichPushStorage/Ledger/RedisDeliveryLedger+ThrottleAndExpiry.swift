import Hiredis
package import RichPushCore
import RichPushQueue

/// The delivery ledger beside a delivery, each call with its Lua: the throttle's minute gate for
/// throttled fan-outs, and held pushes that expired. One call per partition; every key carries its
/// hash tag.
extension RedisDeliveryLedger {
    package func admitThrottled(_ batches: [ThrottledBatch]) async throws -> [Duration] {
        guard !batches.isEmpty else { return [] }
        let parts = Dictionary(grouping: batches.indices, by: { keys.partitionIndex(ofNotification: batches[$0].notification) }).map(
            \.value)
        let calls = parts.map { indices in
            ThrottleCall(
                now: JobQueue.nowMilliseconds(),
                items: indices.map { batches[$0] }.map { batch in
                    ThrottleItem(
                        key: keys.throttle(batch.notification), member: "\(batch.batch):\(batch.pushes)", pushes: batch.pushes,
                        limit: batch.perMinute)
                })
        }
        let replies = try await redis.run(Self.throttleScript, calls: calls)
        var waits = [Duration](repeating: .zero, count: batches.count)
        for (indices, reply) in zip(parts, replies) {
            let values = (try reply.throwingError().array ?? []).map { Duration.milliseconds($0.int ?? 0) }
            guard values.count == indices.count else { throw RedisError.unexpected(reply, expected: "\(indices.count) waits") }
            for (index, wait) in zip(indices, values) { waits[index] = wait }
        }
        return waits
    }

    /// A throttle call: now, and one partition's batches.
    struct ThrottleCall {
        let now: Int64
        let items: [ThrottleItem]
    }

    /// One batch of a ``ThrottleCall``: its notification's throttle set (which may repeat), its
    /// member (`<batch>:<pushes>`), its pushes and the limit per minute.
    struct ThrottleItem {
        let key: String, member: String, pushes: Int, limit: Int
    }

    /// Per batch: 0 when admitted (recorded at now, or already recorded), else ms until the
    /// oldest batches leave the minute and make room.
    static let throttleScript = LuaScript<ThrottleCall, ThrottleItem>(
        [.number("now", \.now)], items: \.items,
        each: [
            .key("key", \.key), .argument("member", \.member), .number("pushes", \.pushes), .number("limit", \.limit),
        ],
        before: """
            local out = {}

            """,
        eachItem: """
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

            """,
        after: """
            return out

            """)

    package func recordExpired(_ expired: [Int: [String]]) async throws {
        let calls = byPartition(expired.filter { !$0.value.isEmpty }) { keys, part in
            ExpiredCall(
                webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds),
                now: JobQueue.nowMilliseconds(),
                items: part.map { id, installations in
                    ExpiredItem(
                        status: keys.notification(id), devices: keys.devices(id), record: keys.notification(id), ledger: keys.ledger(id),
                        id: id,
                        installations: installations)
                })
        }
        try await runAll(Self.expiredScript, calls)
    }

    /// An expiry call: the partition's webhook keys, and its notifications' expired pushes.
    struct ExpiredCall {
        let webhookWants: String, webhookOutbox: String
        let ttl: Int, now: Int64
        let items: [ExpiredItem]
    }

    /// One notification's expired pushes in an ``ExpiredCall``.
    struct ExpiredItem {
        let status: String, devices: String, record: String, ledger: String
        let id: Int
        let installations: [any RedisArgument]
    }

    /// Counts `expired`, marks each device's entry (keeping what it held, under its ledger mark; a
    /// bare mark's in the devices hash), and emits the `expired` events a webhook wants.
    static let expiredScript = LuaScript<ExpiredCall, ExpiredItem>(
        [
            .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .argument("ttl", \.ttl), .argument("now", \.now),
        ], items: \.items,
        each: [
            .key("status", \.status), .key("devices", \.devices), .key("record", \.record), .key("ledger", \.ledger),
            .argument("id", \.id), .list("installations", { $0.installations }),
        ], constants: NotificationLua.constants, using: [NotificationLua.webhookFunctions, NotificationLua.entryFunction],
        before: """
            local hooks = redis.call('EXISTS', webhookWants) == 1

            """,
        eachItem: """
            local items = {}
            if redis.call('EXISTS', status) == 1 then
              redis.call('HINCRBY', status, COUNTER_EXPIRED, installationsCount)
              local inDevices = false
              for i = installationsFrom, installationsTo do
                local value = redis.call('HGET', ledger, ARGV[i])
                local text = entryOf(value)
                local entry = {}
                local old = text or redis.call('HGET', devices, ARGV[i])
                if old then
                  local ok, decoded = pcall(cjson.decode, old)
                  if ok and type(decoded) == 'table' then entry = decoded end
                end
                entry['state'] = COUNTER_EXPIRED
                local encoded = cjson.encode(entry)
                if text then
                  redis.call('HSET', ledger, ARGV[i], string.sub(value, 1, 1) .. encoded)
                elseif value == false then
                  redis.call('HSET', ledger, ARGV[i], LEDGER_RECORDED .. encoded)
                  redis.call('EXPIRE', ledger, ttl, 'NX')
                elseif string.byte(value) ~= LEDGER_LEASED_BYTE then
                  redis.call('HSET', devices, ARGV[i], encoded)
                  inDevices = true
                end
                items[#items + 1] = '{"installation":' .. cjson.encode(ARGV[i]) .. ',"result":' .. encoded .. '}'
              end
              if inDevices and redis.call('TTL', devices) < 0 then redis.call('EXPIRE', devices, ttl) end
              if hooks then emit(webhookWants, webhookOutbox, redis.call('HGET', record, RECORD_CREATOR), id, EVENT_EXPIRED, now, items, record) end
            end

            """,
        after: """
            return 1

            """)
}
