import Hiredis
package import RichPushCore
import RichPushQueue

/// What the dead-lettering of a delivery job leaves in the status, and its undoing by a replay
/// (and a forced replay's clearing of the ledger), each call with its Lua.
///
/// The ledger field of a pair marked failed so is `F`: the lease script takes it as free (a
/// replayed job sends it again) and takes the mark back when it leases it, so the counts stay
/// true whichever of the replay's revive and the worker's lease comes first.
extension RedisDeliveryLedger {
    package func recordDeadLettered(_ reasons: [DeliveryScope: String]) async throws {
        let scopes = Dictionary(grouping: reasons.keys, by: \.notification)
        let calls = byPartition(scopes) { keys, part in
            DeadLetteredCall(
                webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds),
                now: JobQueue.nowMilliseconds(),
                items: part.flatMap { id, scopes in
                    scopes.map { scope in
                        DeadLetteredItem(
                            status: keys.notification(id), devices: keys.devices(id), ledger: keys.ledger(id),
                            record: keys.notification(id), id: id, reason: reasons[scope] ?? "", installations: scope.installations)
                    }
                })
        }
        try await runAll(Self.deadLetteredScript, calls)
    }

    package func reviveDeadLettered(_ scopes: [DeliveryScope]) async throws {
        let calls = byPartition(Dictionary(grouping: scopes, by: \.notification)) { keys, part in
            part.flatMap { id, scopes in
                scopes.map { ReviveItem(status: keys.notification(id), ledger: keys.ledger(id), installations: $0.installations) }
            }
        }
        try await runAll(Self.reviveScript, calls)
        // The replayed pushes get their attempts again.
        let forget: [RedisCommand] = scopes.compactMap { scope in
            guard let installations = scope.installations else { return RedisCommand("DEL", keys.attempts(scope.notification)) }
            guard !installations.isEmpty else { return nil }
            var command = RedisCommand("HDEL", keys.attempts(scope.notification))
            for installation in installations { command.append(installation) }
            return command
        }
        if !forget.isEmpty { try await redis.sendAll(forget) }
    }

    /// Takes back what the dead-lettering of these deliveries marked, each in its app's ledger.
    package func reviveDeadLettered(_ deliveries: [RichPushJob.Delivery]) async throws {
        for (app, group) in Dictionary(grouping: deliveries, by: \.app).sorted(by: { $0.key < $1.key }) {
            try await forApp(app).reviveDeadLettered(group.map(\.scope))
        }
    }

    /// Clears the ledger entries of notification `id`, for the given installations or for all,
    /// so that a forced replay pushes to them again. Returns how many entries existed.
    package func forgetDeliveries(id: Int, installations: [String]? = nil) async throws -> Int {
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

    /// A dead-lettering call: the partition's webhook keys, and the scopes that failed.
    struct DeadLetteredCall {
        let webhookWants: String, webhookOutbox: String
        let ttl: Int, now: Int64
        let items: [DeadLetteredItem]
    }

    /// One scope of a ``DeadLetteredCall``: its notification, the reason, and its installations
    /// (nil: the whole ledger).
    struct DeadLetteredItem {
        let status: String, devices: String, ledger: String, record: String
        let id: Int, reason: String
        let installations: [any RedisArgument]?
    }

    /// Lua: `appPairs(ledger, count, from, to, keep)`: the pairs of a scope whose ledger value
    /// `keep` accepts: with count < 0 every field of the ledger, else the installations in
    /// `ARGV[from…to]` (a missing field's value is `false`). One HGETALL, or one HMGET per 1,000.
    static let appFunction = """
        local function appPairs(ledger, count, from, to, keep)
          local found = {}
          if count < 0 then
            local flat = redis.call('HGETALL', ledger)
            for i = 1, #flat, 2 do
              if keep(flat[i + 1]) then found[#found + 1] = flat[i] end
            end
            return found
          end
          for first = from, to, 1000 do
            local i = first
            for _, value in ipairs(redis.call('HMGET', ledger, unpack(ARGV, first, math.min(first + 999, to)))) do
              if keep(value) then found[#found + 1] = ARGV[i] end
              i = i + 1
            end
          end
          return found
        end

        """

    /// Marks each pair of the scope with no outcome (no field, `T`, or an expired lease)
    /// `F{entry}` in the ledger, its device entry failed (the reason, and the device's own last
    /// error when it had one), counts them `failed`, moves the state to `failed` (unless it is
    /// further) and emits their `failed` events. A whole notification with an empty ledger moves
    /// to `failed` with one event naming no device, once. A notification that expired is skipped.
    static let deadLetteredScript = LuaScript<DeadLetteredCall, DeadLetteredItem>(
        [
            .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .argument("ttl", \.ttl), .number("now", \.now),
        ], items: \.items,
        each: [
            .key("status", \.status), .key("devices", \.devices), .key("ledger", \.ledger), .key("record", \.record),
            .argument("id", \.id), .argument("reason", \.reason), .list("installations", optional: true, { $0.installations }),
        ], constants: NotificationLua.constants,
        using: [
            NotificationLua.stateRankFunction, NotificationLua.advanceFunction, NotificationLua.webhookFunctions,
            appFunction, NotificationLua.entryFunction,
        ],
        before: """
            local hooks = redis.call('EXISTS', webhookWants) == 1
            local leasePattern = '^' .. LEDGER_LEASED .. ':(%d+):'
            local failedState = ',"state":"' .. COUNTER_FAILED .. '"}'
            local function open(value)
              if not value or string.byte(value) == LEDGER_TRIED_BYTE then return true end
              local untilMs = string.match(value, leasePattern)
              return untilMs ~= nil and tonumber(untilMs) <= now
            end

            """,
        eachItem: """
            if redis.call('EXISTS', status) == 1 then
              local marked = appPairs(ledger, installationsCount, installationsFrom, installationsTo, open)
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
                    local entry = '{"error":' .. cjson.encode(text) .. failedState
                    ledgerWrites[#ledgerWrites + 1] = installation
                    ledgerWrites[#ledgerWrites + 1] = LEDGER_FAILED .. entry
                    items[#items + 1] = '{"installation":' .. cjson.encode(installation) .. ',"result":' .. entry .. '}'
                  end
                end
                for j = 1, #ledgerWrites, 2000 do
                  redis.call('HSET', ledger, unpack(ledgerWrites, j, math.min(j + 1999, #ledgerWrites)))
                end
                redis.call('EXPIRE', ledger, ttl, 'NX')
                redis.call('HINCRBY', status, COUNTER_FAILED, #marked)
                advance(status, STATE_FAILED)
              elseif installationsCount < 0 and redis.call('EXISTS', ledger) == 0 and advance(status, STATE_FAILED) then
                items[1] = '{"result":{"error":' .. cjson.encode(reason) .. failedState .. '}'
              end
              if hooks then emit(webhookWants, webhookOutbox, redis.call('HGET', record, RECORD_CREATOR), id, EVENT_FAILED, now, items, record) end
            end

            """,
        after: """
            return 1

            """)

    /// One scope of a revive call: its notification's keys and installations (nil: the whole
    /// ledger).
    struct ReviveItem {
        let status: String, ledger: String
        let installations: [any RedisArgument]?
    }

    /// Each pair of the scope marked `F` becomes `T{"state":"queued"}` (free to lease, still
    /// addressed, its device entry `queued`), counted out of `failed`; a `failed` notification is
    /// `queued` again. A notification that expired is skipped.
    static let reviveScript = LuaScript<[ReviveItem], ReviveItem>(
        [], items: { $0 },
        each: [
            .key("status", \.status), .key("ledger", \.ledger),
            .list("installations", optional: true, { $0.installations }),
        ], constants: NotificationLua.constants, using: [appFunction],
        before: """
            local queued = LEDGER_TRIED .. '{"state":"' .. STATE_QUEUED .. '"}'
            local function failed(value) return value and string.byte(value) == LEDGER_FAILED_BYTE end

            """,
        eachItem: """
            if redis.call('EXISTS', status) == 1 then
              local revived = appPairs(ledger, installationsCount, installationsFrom, installationsTo, failed)
              for j = 1, #revived, 1000 do
                local ledgerWrites = {}
                for i = j, math.min(j + 999, #revived) do
                  ledgerWrites[#ledgerWrites + 1] = revived[i]
                  ledgerWrites[#ledgerWrites + 1] = queued
                end
                redis.call('HSET', ledger, unpack(ledgerWrites))
              end
              if #revived > 0 then redis.call('HINCRBY', status, COUNTER_FAILED, -#revived) end
              if redis.call('HGET', status, FIELD_STATE) == STATE_FAILED then redis.call('HSET', status, FIELD_STATE, STATE_QUEUED) end
            end

            """,
        after: """
            return 1

            """)
}
