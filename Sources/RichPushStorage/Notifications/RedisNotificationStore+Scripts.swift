import Hiredis
import RichPushCore

/// The Lua behind ``RedisNotificationStore``: each write that belongs together is one script, and
/// every key it touches carries the partition's hash tag (one Redis Cluster slot).
extension RedisNotificationStore {
    /// Creates one or more notifications, each all or nothing, in one call (a batch's share of a
    /// partition: all its keys carry the partition's hash tag). Per notification, KEYS: payload,
    /// record, status, creator's index, job stream, delayed set, then the creator's three quota
    /// keys when q > 0, then the idempotency key it completes when its ttl > 0. ARGV: ttl, id,
    /// payload bytes, initial state, n, the idempotency key's ttl (0: none), send time (ms, 0:
    /// now), q, j, then q quota arguments (``quotaFunction``'s), n record field/value items and j
    /// job field/value items. Per notification, in order: 1 created; 0 nothing written, the record
    /// exists (an id is never reused over an older notification); or the quota's `{code, seconds}`
    /// and nothing written when it is spent: the charge and the create in one step on one Redis
    /// (on a cluster the quota keys are in another slot, and the quota is charged first, apart).
    /// One call for many amortizes the script call itself, which costs more than the writes.
    static let createScript = RedisScript(quotaFunction + """
    local stored, indexes = {}, {}
    local function create(k, a)
      local ttl, id = ARGV[a], ARGV[a + 1]
      local n, keyTTL, q, j = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), tonumber(ARGV[a + 7]), tonumber(ARGV[a + 8])
      local f = a + 9 + q
      local nextK = k + 6 + (q > 0 and 3 or 0) + (keyTTL > 0 and 1 or 0)
      local nextA = f + n + j
      local payload, record, status, index = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      if redis.call('EXISTS', record) == 1 then return 0, nextK, nextA end
      local idempotency = keyTTL > 0 and KEYS[nextK - 1] or nil
      if q > 0 then
        local refused = charge(KEYS[k + 6], KEYS[k + 7], KEYS[k + 8], ARGV, a + 9)
        if refused then return refused, nextK, nextA end
      end
      -- A payload sent again in the same call (the same content, hence key) is written once, and
      -- each creator's index gets its expiry once (the call's creates all expire then).
      if not stored[payload] then
        redis.call('SET', payload, ARGV[a + 2], 'EX', ttl)
        stored[payload] = true
      end
      redis.call('HSET', record, unpack(ARGV, f, f + n - 1))
      redis.call('EXPIRE', record, ttl)
      redis.call('HSET', status, 'state', ARGV[a + 3])
      redis.call('EXPIRE', status, ttl)
      redis.call('ZADD', index, id, id)
      if not indexes[index] then
        redis.call('EXPIRE', index, ttl)
        indexes[index] = true
      end
      -- The creator's index drops its oldest entries whose records expired: on one create in 8
      -- (by id), up to 16, so it shrinks faster than it grows once records expire, and the other
      -- creates pay nothing for it (the record keys share the partition's hash tag, hence the
      -- slot, with the index).
      if tonumber(id) % 8 == 0 then
        local base = string.sub(record, 1, #record - #id)
        local gone = {}
        for _, oldest in ipairs(redis.call('ZRANGE', index, 0, 15)) do
          if redis.call('EXISTS', base .. oldest) == 1 then break end
          gone[#gone + 1] = oldest
        end
        if #gone > 0 then redis.call('ZREM', index, unpack(gone)) end
      end
      if idempotency then
        redis.call('HSET', idempotency, 'state', 'done', 'id', id)
        redis.call('EXPIRE', idempotency, keyTTL)
      end
      local sendAt = tonumber(ARGV[a + 6])
      if sendAt > 0 then
        -- As a due retry is kept: the job's fields packed, scored by when it is due.
        redis.call('ZADD', KEYS[k + 5], sendAt, cmsgpack.pack({unpack(ARGV, f + n, nextA - 1)}))
      else
        redis.call('XADD', KEYS[k + 4], '*', unpack(ARGV, f + n, nextA - 1))
      end
      return 1, nextK, nextA
    end
    local out = {}
    local k, a = 1, 1
    while a <= #ARGV do
      local reply
      reply, k, a = create(k, a)
      out[#out + 1] = reply
    end
    return out
    """)

    /// KEYS: status, record, webhook wants, webhook outbox. ARGV: id, now ms. Cancels a
    /// notification none of whose pushes went out (`failed` too: a replay of its dead letter then
    /// sends nothing), or a split fan-out whose planned pushes have not all ended (its remaining
    /// batches then send nothing): "ok"; else its state (nil: none).
    static let cancelScript = RedisScript(NotificationLua.webhookFunctions + """
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then return false end
    if state == 'cancelled' then return state end
    local planned = tonumber(redis.call('HGET', KEYS[1], 'planned') or '0')
    local ended = 0
    for _, counter in ipairs({'sent', 'held', 'invalidToken', 'failed'}) do
      ended = ended + tonumber(redis.call('HGET', KEYS[1], counter) or '0')
    end
    if state == 'accepted' or state == 'scheduled' or state == 'queued' or state == 'failed' or ended < planned then
      redis.call('HSET', KEYS[1], 'state', 'cancelled')
      if redis.call('EXISTS', KEYS[3]) == 1 then
        emit(KEYS[3], KEYS[4], redis.call('HGET', KEYS[2], 'creator'), ARGV[1], 'cancelled', ARGV[2], {'{}'}, KEYS[2])
      end
      return 'ok'
    end
    return state
    """)

    /// KEYS: fetched-by set, status, record, webhook wants, webhook outbox, ledger. ARGV: fetcher,
    /// ttl, counter, state, state order, id, now ms, the webhook event's item, then the
    /// installations of which one must have been addressed (none: no check). 1 recorded, 0 not
    /// addressed or no record (a ledger may outlive its record; both are looked at either way,
    /// so a missing id costs what someone else's does).
    static let fetchScript = RedisScript(NotificationLua.advanceFunction + NotificationLua.webhookFunctions + NotificationLua.addressedFunction + """
    local exists = redis.call('EXISTS', KEYS[3]) == 1
    if not addressed(KEYS[6], 9) or not exists then return 0 end
    if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
      redis.call('EXPIRE', KEYS[1], ARGV[2])
      redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
      if redis.call('EXISTS', KEYS[4]) == 1 then
        emit(KEYS[4], KEYS[5], redis.call('HGET', KEYS[3], 'creator'), ARGV[6], 'fetched', ARGV[7], {ARGV[8]}, KEYS[3])
      end
    end
    advance(KEYS[2], ARGV[4], ARGV[5])
    return 1
    """)

    /// KEYS: status, devices, receipts seen, record, webhook wants, webhook outbox, ledger. ARGV:
    /// counter, installation ('' for none), state, state order, ttl, receipt identity, id, now ms,
    /// the webhook event's item, then the installations of which one must have been addressed
    /// (none: no check). 1 counted, 0 counted before, -1 not addressed or no record (both looked
    /// at either way, as in ``fetchScript``).
    static let receiptScript = RedisScript(NotificationLua.advanceFunction + NotificationLua.webhookFunctions + NotificationLua.addressedFunction + NotificationLua.entryFunction + """
    local exists = redis.call('EXISTS', KEYS[4]) == 1
    if not addressed(KEYS[7], 10) or not exists then return -1 end
    if redis.call('SADD', KEYS[3], ARGV[6]) == 0 then return 0 end
    if redis.call('EXISTS', KEYS[5]) == 1 then
      emit(KEYS[5], KEYS[6], redis.call('HGET', KEYS[4], 'creator'), ARGV[7], ARGV[1], ARGV[8], {ARGV[9]}, KEYS[4])
    end
    if redis.call('TTL', KEYS[3]) < 0 then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
    redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
    if ARGV[2] ~= '' then
      -- The device's entry: in its ledger value (kept under its mark) once an outcome is
      -- recorded, else in the devices hash (a bare mark's, or a pair with none yet).
      local value = redis.call('HGET', KEYS[7], ARGV[2])
      local text = entryOf(value)
      do
        local entry = {}
        local old = text or redis.call('HGET', KEYS[2], ARGV[2])
        if old then
          local ok, decoded = pcall(cjson.decode, old)
          if ok and type(decoded) == 'table' then entry = decoded end
        end
        entry['state'] = ARGV[1]
        if text then
          redis.call('HSET', KEYS[7], ARGV[2], string.sub(value, 1, 1) .. cjson.encode(entry))
        else
          redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(entry))
          if redis.call('TTL', KEYS[2]) < 0 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end
        end
      end
    end
    advance(KEYS[1], ARGV[3], ARGV[4])
    return 1
    """)

}
