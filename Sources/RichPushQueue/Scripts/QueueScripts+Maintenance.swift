import Hiredis

/// The queue's scripts for crash recovery and housekeeping: reclaiming idle jobs, trimming,
/// replaying dead letters, removing idle consumers.
extension QueueScripts {
    /// A reclaim's stream, group, consumer, visibility timeout (ms), count and max deliveries.
    struct ReclaimCall {
        let stream: String, group: String, consumer: String, minIdle: Int, count: Int, maxDeliveries: Int
    }

    /// → {claimed entries, poison entries, poison ids, their delivery counts}. Claims for the
    /// consumer the jobs idle past the visibility timeout; those already delivered max-deliveries
    /// times (poison messages) are claimed too but returned apart, for the worker to dead-letter
    /// as it does a job that failed for good (its handler's `willDeadLetter` first).
    static let reclaim = LuaScript<ReclaimCall, Never>(
        [
            .key("stream", \.stream), .argument("group", \.group), .argument("consumer", \.consumer), .argument("minIdle", \.minIdle),
            .argument("count", \.count), .number("maxDeliveries", \.maxDeliveries),
        ],
        constants: SchedulerField.constants,
        body: """
            local pending = redis.call('XPENDING', stream, group, 'IDLE', minIdle, '-', '+', count)
            local claim, poison, counts = {}, {}, {}
            for _, p in ipairs(pending) do
              if tonumber(p[4]) >= maxDeliveries then
                poison[#poison + 1] = p[1]
                counts[#counts + 1] = p[4]
              else
                claim[#claim + 1] = p[1]
              end
            end
            local claimed, poisoned = {}, {}
            if #claim > 0 then claimed = redis.call('XCLAIM', stream, group, consumer, minIdle, unpack(claim)) end
            if #poison > 0 then poisoned = redis.call('XCLAIM', stream, group, consumer, minIdle, unpack(poison)) end
            return {claimed, poisoned, poison, counts}

            """)

    /// A trim's stream and cutoff id.
    struct TrimCall {
        let stream: String, cutoff: String
    }

    /// Trims entries older than the cutoff, but never an entry that is still pending or not yet
    /// delivered to every group → number trimmed.
    static let trim = LuaScript<TrimCall, Never>(
        [.key("stream", \.stream), .argument("minimum", \.cutoff)],
        constants: SchedulerField.constants,
        body: """
            local function before(a, b)
              local ams, aseq = string.match(a, '(%d+)-(%d+)')
              local bms, bseq = string.match(b, '(%d+)-(%d+)')
              ams, aseq, bms, bseq = tonumber(ams), tonumber(aseq), tonumber(bms), tonumber(bseq)
              return ams < bms or (ams == bms and aseq < bseq)
            end
            if redis.call('EXISTS', stream) == 0 then return 0 end
            local cutoff = minimum
            for _, group in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
              local info = {}
              for i = 1, #group, 2 do info[group[i]] = group[i + 1] end
              local last = info['last-delivered-id']
              if last and before(last, cutoff) then cutoff = last end
              local summary = redis.call('XPENDING', stream, info['name'])
              if summary[2] and before(summary[2], cutoff) then cutoff = summary[2] end
            end
            return redis.call('XTRIM', stream, 'MINID', cutoff)

            """)

    /// The dead letters, where a replayed job is admitted, and the dead letters' ids to replay.
    struct ReplayCall {
        let dead: String, admission: Admission, ids: [any RedisArgument]
    }

    /// → the replayed jobs ({id, fields}: the stream id, or under fair scheduling the ticket of
    /// the job waiting in its app's lane). Admits dead letters again as fresh jobs (attempt 0,
    /// error cleared), keeping their origin id: under fair scheduling into their app's lane, so
    /// a replay of one app's dead letters takes that app's share and waits while it is paused.
    static let replayDead = LuaScript<ReplayCall, Never>(
        [.key("dead", \.dead)] + admissionSlots(\.admission) + [.list("ids", { $0.ids })],
        constants: SchedulerField.constants, using: [stripFields, admitFunction],
        body: """
            local moved = {}
            for i = idsFrom, idsTo do
              local id = ARGV[i]
              local entry = redis.call('XRANGE', dead, id, id)
              if entry[1] then
                local fields = strip(entry[1][2], {err = true, deadAt = true, attempt = true})
                moved[#moved + 1] = {admit(fair, stream, ready, sched, bell, waitPrefix, fields), fields}
                redis.call('XDEL', dead, id)
              end
            end
            admitted()
            return moved

            """)

    /// The stream, counters, group, min idle (ms), only this consumer ('' = any), keep this one
    /// (''), now (ms).
    struct RemoveConsumersCall {
        let stream: String, counters: String, group: String, minIdle: Int, only: String, keep: String, now: Int64
    }

    /// Deletes consumers with nothing pending, atomically (a consumer with pending entries is
    /// never deleted: DELCONSUMER would drop its jobs from the PEL) → deleted names. A worker
    /// leaving cleanly (`only`) keeps its `processed:<name>` share, stamped `exited:<name>`; the
    /// stale sweep (`only` = '') folds the shares of consumers it deletes and of workers that
    /// exited longer than min idle ago into `processed:(departed)`, so the counters hold one
    /// field per recent worker, not one per worker ever started.
    static let removeIdleConsumers = LuaScript<RemoveConsumersCall, Never>(
        [
            .key("stream", \.stream), .key("counters", \.counters), .argument("group", \.group), .number("minIdle", \.minIdle),
            .argument("only", \.only), .argument("keep", \.keep), .argument("now", \.now),
        ],
        constants: SchedulerField.constants,
        body: """
            local function fold(name)
              local share = redis.call('HGET', counters, 'processed:' .. name)
              if share then
                redis.call('HINCRBY', counters, 'processed:(departed)', share)
                redis.call('HDEL', counters, 'processed:' .. name)
              end
              redis.call('HDEL', counters, 'exited:' .. name)
            end
            local removed = {}
            if redis.call('EXISTS', stream) == 1 then
              for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
                local info = {}
                for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
                local name = info['name']
                if info['pending'] == 0 and info['idle'] > minIdle and (only == '' or only == name) and keep ~= name then
                  redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
                  if only == '' then fold(name) else redis.call('HSET', counters, 'exited:' .. name, now) end
                  removed[#removed + 1] = name
                end
              end
            end
            if only == '' then
              local fields = redis.call('HGETALL', counters)
              for i = 1, #fields, 2 do
                local field = fields[i]
                if string.sub(field, 1, 7) == 'exited:' and tonumber(now) - tonumber(fields[i + 1]) > minIdle then
                  fold(string.sub(field, 8))
                end
              end
            end
            return removed

            """)

    /// The stream, the scheduler hash, the group, and the most entries to look at.
    struct RecountCall {
        let stream: String, scheduler: String, group: String, limit: Int
    }

    /// → how many apps' jobs-in-flight counts were wrong and were set right, or -1 when there
    /// were too many entries to look at (nothing changed). Counts the entries holding an app's
    /// count (`fl`) among the pending and the undelivered ones, and sets each `f:` field to it: a
    /// count that a lost write (a failover) left too high would otherwise keep its app under its
    /// cap for ever.
    static let recountInFlight = LuaScript<RecountCall, Never>(
        [
            .key("stream", \.stream), .key("sched", \.scheduler), .argument("group", \.group), .number("limit", \.limit),
        ],
        constants: SchedulerField.constants,
        body: """
            if redis.call('EXISTS', stream) == 0 then return 0 end
            local last
            for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
              local fields = {}
              for i = 1, #info, 2 do fields[info[i]] = info[i + 1] end
              if fields['name'] == group then last = fields['last-delivered-id'] end
            end
            if not last then return 0 end
            local counts = {}
            local function tally(entry)
              for i = 1, #entry[2], 2 do
                if entry[2][i] == 'fl' then counts[entry[2][i + 1]] = (counts[entry[2][i + 1]] or 0) + 1 end
              end
            end
            local pending = redis.call('XPENDING', stream, group, '-', '+', limit + 1)
            local undelivered = redis.call('XRANGE', stream, '(' .. last, '+', 'COUNT', limit + 1)
            if #pending > limit or #undelivered > limit then return -1 end
            for _, p in ipairs(pending) do
              local entry = redis.call('XRANGE', stream, p[1], p[1])
              if entry[1] then tally(entry[1]) end
            end
            for _, entry in ipairs(undelivered) do tally(entry) end
            local fixed = 0
            local fields = redis.call('HGETALL', sched)
            for i = 1, #fields, 2 do
              if string.sub(fields[i], 1, 2) == SCHED_IN_FLIGHT then
                local app = string.sub(fields[i], 3)
                local count = counts[app] or 0
                if tonumber(fields[i + 1]) ~= count then
                  redis.call('HSET', sched, fields[i], count)
                  fixed = fixed + 1
                end
                counts[app] = nil
              end
            end
            for app, count in pairs(counts) do
              redis.call('HSET', sched, SCHED_IN_FLIGHT .. app, count)
              fixed = fixed + 1
            end
            return fixed

            """)
}
