import Hiredis

/// The Lua of the delivery ledger (``RedisDeliveryLedger``): leases and the throttle's minute
/// gate (recorded outcomes and expiries are in `+RecordScripts`). Every key a call touches carries
/// its partition's hash tag.
extension RedisDeliveryLedger {
    /// A lease call: one partition's notifications, each with the installations to lease.
    struct LeaseCall {
        let owner: String, now: Int64, lease: Int, ttl: Int
        let items: [LeaseItem]
    }

    /// One notification's share of a ``LeaseCall``.
    struct LeaseItem {
        let ledger: String, status: String, devices: String
        let installations: [any RedisArgument]
    }

    /// Per installation, in order: -1 leased to the caller, 0 already recorded, n > 0 another
    /// owner's lease is live for n ms. Fields (``LedgerMark``) hold `R{entry}` (recorded, with the
    /// device's entry in the status), `L:<until ms>:<owner>` (leased), `T` or `T{entry}` (tried: its
    /// lease was released, so it may be leased again, and it stays addressed: the push may have
    /// reached the device, whose fetch must still be allowed) or `F{entry}` (failed when its job
    /// was dead-lettered: free and addressed as `T`; leasing it takes the failure back, out of the
    /// `failed` count, the device `queued` again and a `failed` notification `queued`). Bare `R`,
    /// `T`, `F` are from before the entries moved into the ledger (theirs are in the devices hash).
    /// Per ledger one HMGET and one HSET per 2,000 installations and one `EXPIRE … NX`, not a
    /// command per installation.
    static let leaseScript = LuaScript<LeaseCall, LeaseItem>([
        .argument("owner", \.owner), .number("now", \.now), .number("lease", \.lease), .argument("ttl", \.ttl),
    ], items: \.items, each: [
        .key("ledger", \.ledger), .key("status", \.status), .key("devices", \.devices), .list("installations", { $0.installations }),
    ], constants: NotificationLua.constants, before: """
    local leased = LEDGER_LEASED .. ':' .. (now + lease) .. ':' .. owner
    local leasePattern = '^' .. LEDGER_LEASED .. ':(%d+):(.*)$'
    local queuedEntry = '{"state":"' .. STATE_QUEUED .. '"}'
    local out = {}

    """, eachItem: """
    local revived, taken = {}, 0
    local values = {}
    for j = installationsFrom, installationsTo, 2000 do
      for _, value in ipairs(redis.call('HMGET', ledger, unpack(ARGV, j, math.min(j + 1999, installationsTo)))) do
        values[#values + 1] = value
      end
    end
    local writes = {}
    local j = 0
    for i = installationsFrom, installationsTo do
      j = j + 1
      local value = values[j]
      local mark = value and string.byte(value)
      local code = -1
      if mark == LEDGER_RECORDED_BYTE then
        code = 0
      elseif mark == LEDGER_LEASED_BYTE then
        local untilMs, holder = string.match(value, leasePattern)
        if untilMs and holder ~= owner and tonumber(untilMs) > now then code = tonumber(untilMs) - now end
      end
      if code == -1 then
        writes[#writes + 1] = ARGV[i]
        writes[#writes + 1] = leased
        if mark == LEDGER_FAILED_BYTE then
          -- Its failed entry goes with the mark: the device says queued (in the devices hash,
          -- where the status looks for a pair without an entry in the ledger).
          taken = taken + 1
          revived[#revived + 1] = ARGV[i]
          revived[#revived + 1] = queuedEntry
        end
      end
      out[#out + 1] = code
    end
    for w = 1, #writes, 2000 do
      redis.call('HSET', ledger, unpack(writes, w, math.min(w + 1999, #writes)))
    end
    if #writes > 0 then redis.call('EXPIRE', ledger, ttl, 'NX') end
    if taken > 0 then
      for w = 1, #revived, 2000 do
        redis.call('HSET', devices, unpack(revived, w, math.min(w + 1999, #revived)))
      end
      redis.call('EXPIRE', devices, ttl, 'NX')
      redis.call('HINCRBY', status, COUNTER_FAILED, -taken)
      if redis.call('HGET', status, FIELD_STATE) == STATE_FAILED then redis.call('HSET', status, FIELD_STATE, STATE_QUEUED) end
    end

    """, after: """
    return out

    """)

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
    static let throttleScript = LuaScript<ThrottleCall, ThrottleItem>([.number("now", \.now)], items: \.items, each: [
        .key("key", \.key), .argument("member", \.member), .number("pushes", \.pushes), .number("limit", \.limit),
    ], before: """
    local out = {}

    """, eachItem: """
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

    """, after: """
    return out

    """)
}
