import Hiredis

/// The queue's Lua scripts, each declared by the names of its keys and arguments
/// (``LuaScript``). Each touches only keys of one partition (one hash tag), so it runs
/// atomically on a single Redis or a Cluster slot; keys are always passed in KEYS.
enum QueueScripts {
    /// Copies an entry's fields without the ones the script is about to set again.
    static let stripFields = """
        local function strip(fields, drop)
          local kept = {}
          for i = 1, #fields, 2 do
            if not drop[fields[i]] then
              kept[#kept + 1] = fields[i]
              kept[#kept + 1] = fields[i + 1]
            end
          end
          return kept
        end

        """

    /// A job to admit (with an idempotency key: `key` and its ttl in `time`), or a job kept for
    /// later (`key`: its delayed set, `time`: when it is due).
    struct EnqueueCall {
        let admission: Admission
        let key: String
        let time: Int64
        let fields: [any RedisArgument]
    }

    /// → the job's id (see ``admitFunction``).
    static let enqueue = LuaScript<EnqueueCall, Never>(
        admissionSlots(\.admission) + [.list("fields", { $0.fields })],
        constants: SchedulerField.constants, using: [admitFunction],
        body: """
            local id = admit(fair, stream, ready, sched, bell, waitPrefix, {unpack(ARGV, fieldsFrom, fieldsTo)})
            admitted()
            return id

            """)

    /// → {id, 1 if added else 0}; a key already set gives the first job's id.
    static let enqueueOnce = LuaScript<EnqueueCall, Never>(
        admissionSlots(\.admission) + [
            .key("key", \.key), .argument("ttl", \.time), .list("fields", { $0.fields }),
        ], constants: SchedulerField.constants, using: [admitFunction],
        body: """
            local existing = redis.call('GET', key)
            if existing then return {existing, 0} end
            local id = admit(fair, stream, ready, sched, bell, waitPrefix, {unpack(ARGV, fieldsFrom, fieldsTo)})
            admitted()
            redis.call('SET', key, id, 'PX', ttl)
            return {id, 1}

            """)

    /// Keeps the job in the delayed set (`key`) as a due retry is kept (its fields packed, scored
    /// by when it is due).
    static let schedule = LuaScript<EnqueueCall, Never>(
        [.key("delayed", \.key), .argument("due", \.time), .list("fields", { $0.fields })],
        constants: SchedulerField.constants,
        body: """
            return redis.call('ZADD', delayed, due, cmsgpack.pack({unpack(ARGV, fieldsFrom, fieldsTo)}))

            """)

    /// The keys and arguments of a job's retry or dead-lettering.
    struct SettleCall {
        /// The stream, and the delayed set (retry) or the dead letters (dead-lettering).
        let stream: String, target: String, counters: String, scheduler: String
        let group: String, id: String
        /// When it is due (retry) or now (dead-lettering), ms.
        let time: Int64
        let attempt: Int, error: String
        /// The platforms whose pushes failed, `apns,fcm` (field `fp`; empty: none named).
        var platforms: String = ""
        /// Pushes the run got accepted, for the app's total `s:` (a retry's partial success).
        var accepted: Int = 0
    }

    /// Moves the job to the delayed set (with its attempt count and error) and acks it, atomically;
    /// a job that held its app's count in flight gives it back.
    static let retry = LuaScript<SettleCall, Never>(
        [
            .key("stream", \.stream), .key("delayed", \.target), .key("counters", \.counters), .key("sched", \.scheduler),
            .argument("group", \.group), .argument("id", \.id), .argument("due", \.time), .argument("attempt", \.attempt),
            .argument("error", \.error),
            .argument("platforms", \.platforms), .argument("accepted", \.accepted),
        ], constants: SchedulerField.constants, using: [stripFields, releaseFunction],
        body: """
            local entry = redis.call('XRANGE', stream, id, id)
            if entry[1] and redis.call('XACK', stream, group, id) == 1 then
              release(sched, entry[1][2], SCHED_RETRIED, accepted)
              local fields = strip(entry[1][2], {attempt = true, err = true, origin = true, fl = true, fp = true})
              local origin = id
              for i = 1, #entry[1][2], 2 do if entry[1][2][i] == 'origin' then origin = entry[1][2][i + 1] end end
              fields[#fields + 1] = 'attempt'; fields[#fields + 1] = attempt
              fields[#fields + 1] = 'origin'; fields[#fields + 1] = origin
              fields[#fields + 1] = 'err'; fields[#fields + 1] = error
              if platforms ~= '' then fields[#fields + 1] = 'fp'; fields[#fields + 1] = platforms end
              redis.call('ZADD', delayed, due, cmsgpack.pack(fields))
              redis.call('HINCRBY', counters, 'retried', 1)
              return 1
            end
            return redis.call('XACK', stream, group, id)

            """)

    /// → 1, or 0 when the job was no longer pending (another worker settled it): copies the job
    /// to the dead letters with its error and acks it, atomically, once.
    static let deadLetter = LuaScript<SettleCall, Never>(
        [
            .key("stream", \.stream), .key("dead", \.target), .key("counters", \.counters), .key("sched", \.scheduler),
            .argument("group", \.group), .argument("id", \.id), .argument("error", \.error), .argument("now", \.time),
            .argument("platforms", \.platforms),
        ], constants: SchedulerField.constants, using: [stripFields, releaseFunction],
        body: """
            if redis.call('XACK', stream, group, id) == 0 then return 0 end
            local entry = redis.call('XRANGE', stream, id, id)
            local fields = {}
            local origin = id
            if entry[1] then
              for i = 1, #entry[1][2], 2 do if entry[1][2][i] == 'origin' then origin = entry[1][2][i + 1] end end
              release(sched, entry[1][2], SCHED_DEAD_LETTERED)
              fields = strip(entry[1][2], {err = true, origin = true, deadAt = true, fl = true, fp = true})
            end
            fields[#fields + 1] = 'origin'; fields[#fields + 1] = origin
            fields[#fields + 1] = 'err'; fields[#fields + 1] = error
            fields[#fields + 1] = 'deadAt'; fields[#fields + 1] = now
            if platforms ~= '' then fields[#fields + 1] = 'fp'; fields[#fields + 1] = platforms end
            redis.call('XADD', dead, '*', unpack(fields))
            redis.call('HINCRBY', counters, 'dead', 1)
            return 1

            """)

    /// Gives back the jobs-in-flight count an entry's fields hold (`fl <app>`), if any, and
    /// adds one to that app's total `counter` (`r:` retried, `k:` dead-lettered): the per-app
    /// counterparts of `d:` done, in the hash the script already writes (no extra round trip);
    /// and `accepted` (a retry's pushes that did go out) to its total `s:`.
    static let releaseFunction = """
        local function release(sched, fields, counter, accepted)
          for i = 1, #fields, 2 do
            if fields[i] == 'fl' then
              redis.call('HINCRBY', sched, SCHED_IN_FLIGHT .. fields[i + 1], -1)
              redis.call('HINCRBY', sched, counter .. fields[i + 1], 1)
              if accepted and tonumber(accepted) > 0 then redis.call('HINCRBY', sched, SCHED_SENT .. fields[i + 1], accepted) end
              return
            end
          end
        end

        """

    /// Where due jobs go, now (ms) and the most to promote.
    struct PromoteCall {
        let admission: Admission, delayed: String, now: Int64, limit: Int
    }

    /// → number promoted. Admits due retries and scheduled jobs again (into their lanes, or the
    /// stream in arrival order).
    static let promote = LuaScript<PromoteCall, Never>(
        admissionSlots(\.admission) + [
            .key("delayed", \.delayed), .argument("now", \.now), .argument("limit", \.limit),
        ], constants: SchedulerField.constants, using: [admitFunction],
        body: """
            local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, limit)
            for _, member in ipairs(due) do
              admit(fair, stream, ready, sched, bell, waitPrefix, cmsgpack.unpack(member))
              redis.call('ZREM', delayed, member)
            end
            admitted()
            return #due

            """)
}
