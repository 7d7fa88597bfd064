import Hiredis
package import RichPushCore
import RichPushQueue

/// A delivery in the ledger (``DeliveryLedger``): each (notification, installation) pair leased
/// before its push and recorded after it, with the device's entry in the status. Each call sits
/// beside its Lua: one script call per partition for a whole batch, every key it touches under its
/// partition's hash tag. The throttle's minute gate and held pushes' expiry are in
/// `+ThrottleAndExpiry`, dead letters and a forced replay in `+DeadLetters`.
extension RedisDeliveryLedger {
    package func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        guard !keys.isEmpty else { return [] }
        let grouped = Dictionary(grouping: keys.indices, by: { keys[$0].notification })
        // One script call per partition (its ledgers share its hash tag), all in one round trip.
        let partitions = Dictionary(grouping: grouped.keys, by: { self.keys.partitionIndex(ofNotification: $0) }).map { Array($0.value) }
        var calls: [LeaseCall] = []
        var order: [[Int]] = []
        for ids in partitions {
            calls.append(
                LeaseCall(
                    owner: owner, now: JobQueue.nowMilliseconds(), lease: duration.milliseconds, ttl: Int(retention.components.seconds),
                    items: ids.map { id in
                        LeaseItem(
                            ledger: self.keys.ledger(id), status: self.keys.notification(id), devices: self.keys.devices(id),
                            installations: grouped[id]!.map { keys[$0].installation })
                    }))
            order.append(ids.flatMap { grouped[$0]! })
        }
        let replies = try await redis.run(Self.leaseScript, calls: calls)
        var leases = [DeliveryLease](repeating: .recorded, count: keys.count)
        for (indices, reply) in zip(order, replies) {
            let codes = try reply.throwingError().array ?? []
            guard codes.count == indices.count else { throw RedisError.unexpected(reply, expected: "\(indices.count) lease codes") }
            for (index, code) in zip(indices, codes) {
                let value = code.int ?? 0
                leases[index] = value == -1 ? .leased : value == 0 ? .recorded : .leasedByOther(remaining: .milliseconds(value))
            }
        }
        return leases
    }

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
    static let leaseScript = LuaScript<LeaseCall, LeaseItem>(
        [
            .argument("owner", \.owner), .number("now", \.now), .number("lease", \.lease), .argument("ttl", \.ttl),
        ], items: \.items,
        each: [
            .key("ledger", \.ledger), .key("status", \.status), .key("devices", \.devices),
            .list("installations", { $0.installations }),
        ], constants: NotificationLua.constants,
        before: """
            local leased = LEDGER_LEASED .. ':' .. (now + lease) .. ':' .. owner
            local leasePattern = '^' .. LEDGER_LEASED .. ':(%d+):(.*)$'
            local queuedEntry = '{"state":"' .. STATE_QUEUED .. '"}'
            local out = {}

            """,
        eachItem: """
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

            """,
        after: """
            return out

            """)

    package func releaseLeases(_ keys: [DeliveryKey]) async throws {
        guard !keys.isEmpty else { return }
        let grouped = Dictionary(grouping: keys, by: \.notification)
        let ttl = Int(retention.components.seconds)
        // `T`, not a deleted field: free to lease again, and still addressed (see leaseScript).
        try await redis.sendAll(
            grouped.flatMap { id, pairs in
                var command = RedisCommand("HSET", self.keys.ledger(id))
                for pair in pairs {
                    command.append(pair.installation)
                    command.append(LedgerMark.tried.rawValue)
                }
                return [command, RedisCommand("EXPIRE", self.keys.ledger(id), ttl, "NX")]
            })
    }

    package func countFailedAttempts(_ pushes: [Int: [String]]) async throws -> [Int: [String: Int]] {
        let ttl = Int(retention.components.seconds)
        let ordered = pushes.filter { !$0.value.isEmpty }.map { ($0.key, Array(Set($0.value)).sorted()) }
        guard !ordered.isEmpty else { return [:] }
        var commands: [RedisCommand] = []
        for (id, installations) in ordered {
            for installation in installations { commands.append(RedisCommand("HINCRBY", keys.attempts(id), installation, 1)) }
            commands.append(RedisCommand("EXPIRE", keys.attempts(id), ttl, "NX"))
        }
        let replies = try await redis.pipeline(commands)
        var counts: [Int: [String: Int]] = [:]
        var index = 0
        for (id, installations) in ordered {
            for installation in installations {
                try replies[index].throwingError()
                guard let count = replies[index].int else {
                    throw RedisError(code: .unexpectedReply, message: "HINCRBY answered \(replies[index])")
                }
                counts[id, default: [:]][installation] = count
                index += 1
            }
            try replies[index].throwingError()
            index += 1
        }
        return counts
    }

    /// One script call per partition, all in one pipeline: for each notification its counters,
    /// per-device entries (JSON written by hand: this runs for every push); the counters `sent`
    /// and `held` are what make its (derived) state `sent`.
    package func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws {
        let now = JobQueue.nowMilliseconds()
        let calls = byPartition(results.filter { !$0.value.isEmpty }) { keys, part in
            RecordCall(
                webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds), now: now,
                items: part.map { id, results in
                    var counts: [DeliveryCounter: Int] = [:]
                    var devices: [any RedisArgument] = []
                    var released: [any RedisArgument] = []
                    for result in results {
                        counts[result.counter, default: 0] += 1
                        guard result.counter != .duplicateSuppressed else { continue }
                        devices.append(result.installation)
                        devices.append(
                            NotificationLua.deviceEntry(
                                state: result.counter.rawValue, adapterID: result.adapterID, at: now, error: result.error,
                                template: result.template, locale: result.locale, strategy: result.strategy))
                        if result.counter == .retried { released.append(result.installation) }
                    }
                    var counters: [any RedisArgument] = []
                    for (counter, count) in counts { counters += [counter.rawValue, count] as [any RedisArgument] }
                    return RecordItem(
                        status: keys.notification(id), ledger: keys.ledger(id), record: keys.notification(id), id: id,
                        counters: counters, released: released, devices: devices)
                })
        }
        try await runAll(Self.recordScript, calls)
    }

    /// A record call: the partition's webhook keys, and its notifications' outcomes.
    struct RecordCall {
        let webhookWants: String, webhookOutbox: String
        let ttl: Int, now: Int64
        let items: [RecordItem]
    }

    /// One notification's outcomes in a ``RecordCall``: (counter, increment) pairs, the
    /// installations whose lease is released (retried), and (installation, entry) pairs.
    struct RecordItem {
        let status: String, ledger: String, record: String
        let id: Int
        let counters: [any RedisArgument], released: [any RedisArgument], devices: [any RedisArgument]
    }

    /// Released installations' fields become `T{entry}` (free to lease and still addressed);
    /// every other installation with an entry is recorded in the ledger with its entry,
    /// `R{entry}`: one write per push for both; the outcomes a webhook wants (sent and held as
    /// `sent`, `failed`, `invalidToken`) go into the outbox in the same step.
    static let recordScript = LuaScript<RecordCall, RecordItem>(
        [
            .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .argument("ttl", \.ttl), .argument("now", \.now),
        ], items: \.items,
        each: [
            .key("status", \.status), .key("ledger", \.ledger), .key("record", \.record), .argument("id", \.id),
            .list("counters", { $0.counters }), .list("released", { $0.released }), .list("devices", { $0.devices }),
        ], constants: NotificationLua.constants, using: [NotificationLua.webhookFunctions],
        before: """
            local hooks = redis.call('EXISTS', webhookWants) == 1
            local events = {[COUNTER_SENT] = EVENT_SENT, [COUNTER_HELD] = EVENT_SENT, [COUNTER_FAILED] = EVENT_FAILED, [COUNTER_INVALID_TOKEN] = EVENT_INVALID_TOKEN}

            """,
        eachItem: """
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
              local creator = redis.call('HGET', record, RECORD_CREATOR)
              for event, items in pairs(byType) do emit(webhookWants, webhookOutbox, creator, id, event, now, items, record) end
            end
            -- The ledger got its expiry with the leases: only a field that was not leased (a ledger
            -- that expired meanwhile, or a record without a lease) may have made a new key.
            if added > 0 then redis.call('EXPIRE', ledger, ttl, 'NX') end

            """,
        after: """
            return 1

            """)
}
