import Hiredis
package import RichPushCore
import RichPushQueue

/// What the dead-lettering of a delivery job leaves in the status, and its undoing by a replay.
///
/// The ledger field of a pair marked failed so is `F`: the lease script takes it as free (a
/// replayed job sends it again) and takes the mark back when it leases it, so the counts stay
/// true whichever of the replay's revive and the worker's lease comes first.
extension RedisDeliveryLedger {
    package func recordDeadLettered(_ reasons: [DeliveryScope: String]) async throws {
        let scopes = Dictionary(grouping: reasons.keys, by: \.notification)
        let calls = byPartition(scopes) { keys, part in
            var scriptKeys: [any RedisArgument] = [keys.webhookWants, keys.webhookOutbox]
            var arguments: [any RedisArgument] = [Int(retention.components.seconds), JobQueue.nowMilliseconds(), NotificationLua.stateOrder]
            for (id, scopes) in part {
                for scope in scopes {
                    scriptKeys += [keys.status(id), keys.devices(id), keys.ledger(id), keys.notification(id)] as [any RedisArgument]
                    arguments += [id, reasons[scope] ?? "", scope.installations?.count ?? -1] as [any RedisArgument]
                    arguments += (scope.installations ?? []) as [any RedisArgument]
                }
            }
            return (scriptKeys, arguments)
        }
        try await runAll(Self.deadLetteredScript, calls)
    }

    package func reviveDeadLettered(_ scopes: [DeliveryScope]) async throws {
        let calls = byPartition(Dictionary(grouping: scopes, by: \.notification)) { keys, part in
            var scriptKeys: [any RedisArgument] = []
            var arguments: [any RedisArgument] = []
            for (id, scopes) in part {
                for scope in scopes {
                    scriptKeys += [keys.status(id), keys.devices(id), keys.ledger(id)] as [any RedisArgument]
                    arguments.append(scope.installations?.count ?? -1)
                    arguments += (scope.installations ?? []) as [any RedisArgument]
                }
            }
            return (scriptKeys, arguments)
        }
        try await runAll(Self.reviveScript, calls)
    }

    /// Lua: `scopePairs(ledger, n, first, keep)`: the pairs of a scope whose ledger value `keep`
    /// accepts: with n < 0 every field of the ledger, else the n installations in ARGV from
    /// `first` (a missing field's value is `false`). One HGETALL, or one HMGET per 1,000.
    static let scopeFunction = """
    local function scopePairs(ledger, n, first, keep)
      local found = {}
      if n < 0 then
        local flat = redis.call('HGETALL', ledger)
        for i = 1, #flat, 2 do
          if keep(flat[i + 1]) then found[#found + 1] = flat[i] end
        end
        return found
      end
      for from = first, first + n - 1, 1000 do
        local to = math.min(from + 999, first + n - 1)
        local values = redis.call('HMGET', ledger, unpack(ARGV, from, to))
        for j = 1, #values do
          if keep(values[j]) then found[#found + 1] = ARGV[from + j - 1] end
        end
      end
      return found
    end

    """

    /// KEYS: webhook wants, webhook outbox, then (status, devices, ledger, record) per scope.
    /// ARGV: ttl, now ms, state order, then per scope: id, reason, n (-1: the whole ledger), n
    /// installations. Marks each pair of the scope with no outcome (no field, `T`, or an expired
    /// lease) `F{entry}` in the ledger, its device entry failed (the reason, and the device's own
    /// last error when it had one), counts them `failed`, moves the state to `failed` (unless it
    /// is further) and emits their `failed` events. A whole notification with an empty ledger moves
    /// to `failed` with one event naming no device, once. A notification that expired is skipped.
    static let deadLetteredScript = RedisScript(NotificationLua.advanceFunction + NotificationLua.webhookFunctions + scopeFunction + NotificationLua.entryFunction + """
    local ttl, now, order = ARGV[1], tonumber(ARGV[2]), ARGV[3]
    local hooks = redis.call('EXISTS', KEYS[1]) == 1
    local function open(value)
      if not value or string.byte(value) == 84 then return true end
      local untilMs = string.match(value, '^L:(%d+):')
      return untilMs ~= nil and tonumber(untilMs) <= now
    end
    local a = 4
    for k = 3, #KEYS, 4 do
      local status, devices, ledger, record = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      local id, reason, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
      local first = a + 3
      a = first + math.max(n, 0)
      if redis.call('EXISTS', status) == 1 then
        local marked = scopePairs(ledger, n, first, open)
        local items = {}
        if #marked > 0 then
          local ledgerWrites = {}
          for from = 1, #marked, 1000 do
            local part = {unpack(marked, from, math.min(from + 999, #marked))}
            local values = redis.call('HMGET', ledger, unpack(part))
            local olds = redis.call('HMGET', devices, unpack(part))
            for j = 1, #part do
              local installation = part[j]
              local text = reason
              local last = entryOf(values[j]) or olds[j]
              if last then
                local ok, old = pcall(cjson.decode, last)
                if ok and type(old) == 'table' and type(old['error']) == 'string' and old['error'] ~= '' then
                  text = reason .. '; its last error: ' .. old['error']
                end
              end
              local entry = '{"error":' .. cjson.encode(text) .. ',"state":"failed"}'
              ledgerWrites[#ledgerWrites + 1] = installation
              ledgerWrites[#ledgerWrites + 1] = 'F' .. entry
              items[#items + 1] = '{"installation":' .. cjson.encode(installation) .. ',"result":' .. entry .. '}'
            end
          end
          for j = 1, #ledgerWrites, 2000 do
            redis.call('HSET', ledger, unpack(ledgerWrites, j, math.min(j + 1999, #ledgerWrites)))
          end
          redis.call('EXPIRE', ledger, ttl, 'NX')
          redis.call('HINCRBY', status, 'failed', #marked)
          advance(status, 'failed', order)
        elseif n < 0 and redis.call('EXISTS', ledger) == 0 and advance(status, 'failed', order) then
          items[1] = '{"result":{"error":' .. cjson.encode(reason) .. ',"state":"failed"}}'
        end
        if hooks then emit(KEYS[1], KEYS[2], redis.call('HGET', record, 'creator'), id, 'failed', now, items, record) end
      end
    end
    return 1
    """)

    /// KEYS: (status, devices, ledger) per scope. ARGV: per scope: n (-1: the whole ledger), n
    /// installations. Each pair of the scope marked `F` becomes `T{"state":"queued"}` (free to
    /// lease, still addressed, its device entry `queued`), counted out of `failed`; a `failed` notification is
    /// `queued` again. A notification that expired is skipped.
    static let reviveScript = RedisScript(scopeFunction + """
    local a = 1
    for k = 1, #KEYS, 3 do
      local status, devices, ledger = KEYS[k], KEYS[k + 1], KEYS[k + 2]
      local n = tonumber(ARGV[a])
      local first = a + 1
      a = first + math.max(n, 0)
      if redis.call('EXISTS', status) == 1 then
        local revived = scopePairs(ledger, n, first, function(value) return value and string.byte(value) == 70 end)
        for j = 1, #revived, 1000 do
          local ledgerWrites = {}
          for i = j, math.min(j + 999, #revived) do
            ledgerWrites[#ledgerWrites + 1] = revived[i]
            ledgerWrites[#ledgerWrites + 1] = 'T{"state":"queued"}'
          end
          redis.call('HSET', ledger, unpack(ledgerWrites))
        end
        if #revived > 0 then redis.call('HINCRBY', status, 'failed', -#revived) end
        if redis.call('HGET', status, 'state') == 'failed' then redis.call('HSET', status, 'state', 'queued') end
      end
    end
    return 1
    """)
}

extension RedisDeliveryLedger {
    /// The same ledger for `app`'s notifications, sharing this one's cache of records (and its
    /// budget: a worker's memory does not grow with the apps it serves).
    package func forApp(_ app: AppID) -> RedisDeliveryLedger {
        app == keys.app ? self : RedisDeliveryLedger(redis: redis, keys: keys.forApp(app), retention: retention, records: records.forApp(app))
    }

    /// Takes back what the dead-lettering of these deliveries marked, each in its app's ledger.
    package func reviveDeadLettered(_ deliveries: [RichPushJob.Delivery]) async throws {
        for (app, group) in Dictionary(grouping: deliveries, by: \.app).sorted(by: { $0.key < $1.key }) {
            try await forApp(app).reviveDeadLettered(group.map(\.scope))
        }
    }
}
