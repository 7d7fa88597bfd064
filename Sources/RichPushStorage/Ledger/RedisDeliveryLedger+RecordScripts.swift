import Hiredis

/// The Lua that records what became of pushes: the platform's answers, and held pushes that
/// expired. One call per partition; every key carries its hash tag.
extension RedisDeliveryLedger {
    /// A record call: the partition's webhook keys, and its notifications' outcomes.
    struct RecordCall {
        let webhookWants: String, webhookOutbox: String
        let ttl: Int, now: Int64
        let items: [RecordItem]
    }

    /// One notification's outcomes in a ``RecordCall``: the state to advance to ('' for none),
    /// (counter, increment) pairs, the installations whose lease is released (retried), and
    /// (installation, entry) pairs.
    struct RecordItem {
        let status: String, ledger: String, record: String
        let id: Int, state: String
        let counters: [any RedisArgument], released: [any RedisArgument], devices: [any RedisArgument]
    }

    /// Released installations' fields become `T{entry}` (free to lease and still addressed);
    /// every other installation with an entry is recorded in the ledger with its entry,
    /// `R{entry}`: one write per push for both; the outcomes a webhook wants (sent and held as
    /// `sent`, `failed`, `invalidToken`) go into the outbox in the same step.
    static let recordScript = LuaScript<RecordCall, RecordItem>([
        .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .argument("ttl", \.ttl), .argument("now", \.now),
    ], items: \.items, each: [
        .key("status", \.status), .key("ledger", \.ledger), .key("record", \.record), .argument("id", \.id), .argument("state", \.state),
        .list("counters", { $0.counters }), .list("released", { $0.released }), .list("devices", { $0.devices }),
    ], constants: NotificationLua.constants, using: [NotificationLua.advanceFunction, NotificationLua.webhookFunctions], before: """
    local hooks = redis.call('EXISTS', webhookWants) == 1
    local events = {[COUNTER_SENT] = 'sent', [COUNTER_HELD] = 'sent', [COUNTER_FAILED] = 'failed', [COUNTER_INVALID_TOKEN] = 'invalidToken'}

    """, eachItem: """
    for i = countersFrom, countersTo, 2 do
      redis.call('HINCRBY', status, ARGV[i], ARGV[i + 1])
    end
    local released = {}
    for i = releasedFrom, releasedTo do
      released[ARGV[i]] = true
    end
    local writes, written = {}, {}
    for i = devicesFrom, devicesTo, 2 do
      writes[#writes + 1] = ARGV[i]
      writes[#writes + 1] = (released[ARGV[i]] and LEDGER_TRIED or LEDGER_RECORDED) .. ARGV[i + 1]
      written[ARGV[i]] = true
    end
    for installation in pairs(released) do
      if not written[installation] then
        writes[#writes + 1] = installation
        writes[#writes + 1] = LEDGER_TRIED
      end
    end
    local added = 0
    for w = 1, #writes, 200 do
      added = added + redis.call('HSET', ledger, unpack(writes, w, math.min(w + 199, #writes)))
    end
    if devicesCount > 0 and hooks then
      local byType = {}
      for i = devicesFrom, devicesTo, 2 do
        local event = events[string.match(ARGV[i + 1], '"state":"(%a+)"') or '']
        if event and not released[ARGV[i]] then
          byType[event] = byType[event] or {}
          table.insert(byType[event], '{"installation":' .. cjson.encode(ARGV[i]) .. ',"result":' .. ARGV[i + 1] .. '}')
        end
      end
      local creator = redis.call('HGET', record, 'creator')
      for event, items in pairs(byType) do emit(webhookWants, webhookOutbox, creator, id, event, now, items, record) end
    end
    -- The ledger got its expiry with the leases: only a field that was not leased (a ledger
    -- that expired meanwhile, or a record without a lease) may have made a new key.
    if added > 0 then redis.call('EXPIRE', ledger, ttl, 'NX') end
    if state ~= '' then advance(status, state) end

    """, after: """
    return 1

    """)

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
    static let expiredScript = LuaScript<ExpiredCall, ExpiredItem>([
        .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .argument("ttl", \.ttl), .argument("now", \.now),
    ], items: \.items, each: [
        .key("status", \.status), .key("devices", \.devices), .key("record", \.record), .key("ledger", \.ledger),
        .argument("id", \.id), .list("installations", { $0.installations }),
    ], constants: NotificationLua.constants, using: [NotificationLua.webhookFunctions, NotificationLua.entryFunction], before: """
    local hooks = redis.call('EXISTS', webhookWants) == 1

    """, eachItem: """
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
      if hooks then emit(webhookWants, webhookOutbox, redis.call('HGET', record, 'creator'), id, 'expired', now, items, record) end
    end

    """, after: """
    return 1

    """)
}
