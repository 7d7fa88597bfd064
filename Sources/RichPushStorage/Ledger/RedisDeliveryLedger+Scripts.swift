import Hiredis

/// The Lua of the delivery ledger (``RedisDeliveryLedger``): leases, recorded outcomes,
/// expiries and the throttle's minute gate. Every key a call touches carries its partition's hash
/// tag.
extension RedisDeliveryLedger {
    /// KEYS: (ledger, status, devices) per notification. ARGV: owner, now ms, lease ms, ttl s,
    /// then per ledger a count and that many installations. Per installation, in order: -1 leased
    /// to the caller, 0 already recorded, n > 0 another owner's lease is live for n ms. Fields
    /// hold `R{entry}` (recorded, with the device's entry in the status), `L:<until ms>:<owner>`
    /// (leased), `T` or `T{entry}` (tried: its lease was released, so it may be leased again, and
    /// it stays addressed: the push may have reached the device, whose fetch must still be
    /// allowed) or `F{entry}` (failed when its job was dead-lettered: free and addressed as `T`;
    /// leasing it takes the failure back, out of the `failed` count, the device `queued` again
    /// and a `failed` notification `queued`). Bare `R`, `T`, `F` are from before the entries moved into the ledger (theirs are
    /// in the devices hash). Per ledger one HMGET and one HSET per 2,000 installations and one
    /// `EXPIRE … NX`, not a command per installation.
    static let leaseScript = RedisScript("""
    local owner, now, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
    local leased = 'L:' .. (now + lease) .. ':' .. owner
    local out = {}
    local a = 5
    for k = 1, #KEYS, 3 do
      local ledger = KEYS[k]
      local count = tonumber(ARGV[a])
      local revived, taken = {}, 0
      local values = {}
      for j = a + 1, a + count, 2000 do
        for _, value in ipairs(redis.call('HMGET', ledger, unpack(ARGV, j, math.min(j + 1999, a + count)))) do
          values[#values + 1] = value
        end
      end
      local writes = {}
      for j = 1, count do
        local value = values[j]
        local mark = value and string.byte(value)
        local code = -1
        if mark == 82 then
          code = 0
        elseif mark == 76 then
          local untilMs, holder = string.match(value, '^L:(%d+):(.*)$')
          if untilMs and holder ~= owner and tonumber(untilMs) > now then code = tonumber(untilMs) - now end
        end
        if code == -1 then
          writes[#writes + 1] = ARGV[a + j]
          writes[#writes + 1] = leased
          if mark == 70 then
            -- Its failed entry goes with the mark: the device says queued (in the devices hash,
            -- where the status looks for a pair without an entry in the ledger).
            taken = taken + 1
            revived[#revived + 1] = ARGV[a + j]
            revived[#revived + 1] = '{"state":"queued"}'
          end
        end
        out[#out + 1] = code
      end
      for j = 1, #writes, 2000 do
        redis.call('HSET', ledger, unpack(writes, j, math.min(j + 1999, #writes)))
      end
      if #writes > 0 then redis.call('EXPIRE', ledger, ARGV[4], 'NX') end
      if taken > 0 then
        local status = KEYS[k + 1]
        for j = 1, #revived, 2000 do
          redis.call('HSET', KEYS[k + 2], unpack(revived, j, math.min(j + 1999, #revived)))
        end
        redis.call('EXPIRE', KEYS[k + 2], ARGV[4], 'NX')
        redis.call('HINCRBY', status, 'failed', -taken)
        if redis.call('HGET', status, 'state') == 'failed' then redis.call('HSET', status, 'state', 'queued') end
      end
      a = a + count + 1
    end
    return out
    """)

    /// KEYS: webhook wants, webhook outbox, then (status, devices, record, ledger) per
    /// notification. ARGV: ttl, now ms, then per notification: id, n, n installations. Counts
    /// `expired`, marks each device's entry (keeping what it held, under its ledger mark; a bare
    /// mark's in the devices hash), and emits the `expired` events a webhook wants.
    static let expiredScript = RedisScript(NotificationLua.webhookFunctions + NotificationLua.entryFunction + """
    local ttl, now = ARGV[1], ARGV[2]
    local hooks = redis.call('EXISTS', KEYS[1]) == 1
    local a = 3
    for k = 3, #KEYS, 4 do
      local status, devices, record, ledger = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      local id, n = ARGV[a], tonumber(ARGV[a + 1])
      local items = {}
      if redis.call('EXISTS', status) == 1 then
        redis.call('HINCRBY', status, 'expired', n)
        local inDevices = false
        for i = a + 2, a + 1 + n do
          local value = redis.call('HGET', ledger, ARGV[i])
          local text = entryOf(value)
          local entry = {}
          local old = text or redis.call('HGET', devices, ARGV[i])
          if old then
            local ok, decoded = pcall(cjson.decode, old)
            if ok and type(decoded) == 'table' then entry = decoded end
          end
          entry['state'] = 'expired'
          local encoded = cjson.encode(entry)
          if text then
            redis.call('HSET', ledger, ARGV[i], string.sub(value, 1, 1) .. encoded)
          elseif value == false then
            redis.call('HSET', ledger, ARGV[i], 'R' .. encoded)
            redis.call('EXPIRE', ledger, ttl, 'NX')
          elseif string.byte(value) ~= 76 then
            redis.call('HSET', devices, ARGV[i], encoded)
            inDevices = true
          end
          items[#items + 1] = '{"installation":' .. cjson.encode(ARGV[i]) .. ',"result":' .. encoded .. '}'
        end
        if inDevices and redis.call('TTL', devices) < 0 then redis.call('EXPIRE', devices, ttl) end
        if hooks then emit(KEYS[1], KEYS[2], redis.call('HGET', record, 'creator'), id, 'expired', now, items, record) end
      end
      a = a + 2 + n
    end
    return 1
    """)

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

    /// KEYS: webhook wants, webhook outbox, then (status, ledger, record) per notification. ARGV:
    /// ttl, state order, now ms, then per notification: id, state to advance to ('' for none), n,
    /// r, d, then n (counter, increment) pairs, r installations whose lease is released (retried:
    /// their field becomes `T{entry}`, free to lease and still addressed), d items of
    /// (installation, entry) pairs. Every installation with an entry and not released is recorded
    /// in the ledger with its entry, `R{entry}`: one write per push for both; the outcomes a
    /// webhook wants (sent and held as `sent`, `failed`, `invalidToken`) go into the outbox in
    /// the same step.
    static let recordScript = RedisScript(NotificationLua.advanceFunction + NotificationLua.webhookFunctions + """
    local ttl, order, now = ARGV[1], ARGV[2], ARGV[3]
    local hooks = redis.call('EXISTS', KEYS[1]) == 1
    local events = {sent = 'sent', held = 'sent', failed = 'failed', invalidToken = 'invalidToken'}
    local a = 4
    for k = 3, #KEYS, 3 do
      local status, ledger, record = KEYS[k], KEYS[k + 1], KEYS[k + 2]
      local id, state, n, r, d = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
      local i = a + 5
      for _ = 1, n do
        redis.call('HINCRBY', status, ARGV[i], ARGV[i + 1])
        i = i + 2
      end
      local released = {}
      for _ = 1, r do
        released[ARGV[i]] = true
        i = i + 1
      end
      local last = i + d - 1
      local writes, written = {}, {}
      for j = i, last, 2 do
        writes[#writes + 1] = ARGV[j]
        writes[#writes + 1] = (released[ARGV[j]] and 'T' or 'R') .. ARGV[j + 1]
        written[ARGV[j]] = true
      end
      for installation in pairs(released) do
        if not written[installation] then
          writes[#writes + 1] = installation
          writes[#writes + 1] = 'T'
        end
      end
      local added = 0
      for j = 1, #writes, 200 do
        added = added + redis.call('HSET', ledger, unpack(writes, j, math.min(j + 199, #writes)))
      end
      if d > 0 and hooks then
        local byType = {}
        for j = i, last, 2 do
          local event = events[string.match(ARGV[j + 1], '"state":"(%a+)"') or '']
          if event and not released[ARGV[j]] then
            byType[event] = byType[event] or {}
            table.insert(byType[event], '{"installation":' .. cjson.encode(ARGV[j]) .. ',"result":' .. ARGV[j + 1] .. '}')
          end
        end
        local creator = redis.call('HGET', record, 'creator')
        for event, items in pairs(byType) do emit(KEYS[1], KEYS[2], creator, id, event, now, items, record) end
      end
      -- The ledger got its expiry with the leases: only a field that was not leased (a ledger
      -- that expired meanwhile, or a record without a lease) may have made a new key.
      if added > 0 then redis.call('EXPIRE', ledger, ttl, 'NX') end
      if state ~= '' then advance(status, state, order) end
      a = last + 1
    end
    return 1
    """)
}
