import Hiredis

/// Fair scheduling's scripts (docs/queue.md#fair-scheduling): a job is admitted into its app's
/// lane, and a worker's take moves jobs from the ready apps into the stream in fair order and
/// reads them, in one step. The lanes' keys are made from `waitPrefix` inside the scripts: they
/// carry the partition's hash tag, so they live in the slot of the keys the script is given.
extension QueueScripts {
    /// Where a job goes when it is admitted (see ``admitFunction``).
    struct Admission {
        let stream: String, ready: String, scheduler: String, bell: String
        let fair: Int, waitPrefix: String

        init(_ configuration: JobQueueConfiguration) {
            stream = configuration.streamKey
            ready = configuration.readyKey
            scheduler = configuration.schedulerKey
            bell = configuration.bellKey
            fair = configuration.scheduling == .fair ? 1 : 0
            waitPrefix = configuration.waitPrefix
        }
    }

    /// An admission's keys and arguments, for a script that admits jobs.
    static func admissionSlots<Call>(_ admission: @escaping @Sendable (Call) -> Admission) -> [LuaSlot<Call>] {
        [
            .key("stream", { admission($0).stream }), .key("ready", { admission($0).ready }),
            .key("sched", { admission($0).scheduler }), .key("bell", { admission($0).bell }),
            .number("fair", { admission($0).fair }), .argument("waitPrefix", { admission($0).waitPrefix }),
        ]
    }

    /// `admit(fair, stream, ready, sched, bell, waitPrefix, fields)` → the stream id in arrival
    /// order; in fair order a ticket `w-<n>`, which becomes the job's `origin` unless it has one
    /// (a retry's): the job gets its stream id when a worker takes it. Fair: the job's fields (a
    /// list of field/value pairs naming its `app` and `lane`) wait packed in the lane's list, and a
    /// app that had nothing waiting joins the ready ones at the current virtual time (or its own
    /// pass, if that is later: going idle for a moment earns nothing) and rings the bell for a
    /// worker blocked with nothing to take.
    ///
    /// What one script call admits shares its bookkeeping, so a call that admits many jobs (a
    /// create of many notifications, a promotion, a replay) pays it once, not per job: tickets
    /// are reserved 32 at a time (numbers left unused are skipped: tickets only need to be unique
    /// and rising), an app is looked up in the ready set once, and the jobs admitted are added
    /// to the partition's `waiting` count by `admitted()`, which every script that admits calls
    /// on each way out.
    static let admitFunction = """
        local admission = {next = 0, last = -1, ready = {}, waiting = {}}
        local function admit(fair, stream, ready, sched, bell, waitPrefix, fields)
          if fair ~= 1 then return redis.call('XADD', stream, '*', unpack(fields)) end
          local app, lane = '_', 'now'
          for i = 1, #fields, 2 do
            if fields[i] == 'app' then app = fields[i + 1] elseif fields[i] == 'lane' then lane = fields[i + 1] end
          end
          if admission.next > admission.last or admission.sched ~= sched then
            admission.last = redis.call('HINCRBY', sched, 'tickets', 32)
            admission.next = admission.last - 31
            admission.sched = sched
          end
          local ticket = 'w-' .. admission.next
          admission.next = admission.next + 1
          local origin = false
          for i = 1, #fields, 2 do if fields[i] == 'origin' then origin = true end end
          if not origin then
            fields[#fields + 1] = 'origin'
            fields[#fields + 1] = ticket
          end
          redis.call('RPUSH', waitPrefix .. app .. ':' .. lane, cmsgpack.pack(fields))
          admission.waiting[sched] = (admission.waiting[sched] or 0) + 1
          -- A paused app's jobs wait in its lanes; it joins the ready ones when resumed. Looked up
          -- once per call: nothing else changes the ready set while the script runs.
          local known = admission.ready[ready] or {}
          admission.ready[ready] = known
          if not known[app] then
            known[app] = true
            if not redis.call('ZSCORE', ready, app) and not redis.call('HGET', sched, SCHED_PAUSED .. app) then
              local at = redis.call('HMGET', sched, SCHED_VIRTUAL_TIME, SCHED_PASS .. app)
              redis.call('ZADD', ready, math.max(tonumber(at[1] or 0), tonumber(at[2] or 0)), app)
              -- Trimmed only past 64 rings: a ring costs one command, not two.
              if redis.call('RPUSH', bell, 1) > 64 then redis.call('LTRIM', bell, 0, 63) end
            end
          end
          return ticket
        end

        -- Adds the jobs admitted so far to their partitions' `waiting` counts (once per call).
        local function admitted()
          for sched, count in pairs(admission.waiting) do redis.call('HINCRBY', sched, SCHED_WAITING, count) end
          admission.waiting = {}
        end

        """

    /// A take's keys and arguments.
    struct TakeCall {
        let stream: String, ready: String, scheduler: String, bell: String
        let group: String, consumer: String, count: Int, waitPrefix: String
        /// The fewest jobs an app gets when it is picked (1: strict interleaving by pass).
        let quantum: Int
        /// 1: read what was moved (and anything else undelivered) for the consumer; 0: only move.
        let read: Int
        /// The worker's job slots (0: no share of slots is kept), and the jobs it runs now, by
        /// app: flat `app, count` pairs.
        let slots: Int
        /// The most bulk-lane jobs (fan-out sub-jobs) this take may move, whatever the app: the
        /// worker's bulk slots less the bulk jobs it runs now (-1: no bound).
        var bulkRoom: Int = -1
        let running: [any RedisArgument]
    }

    /// → the consumer's XREADGROUP reply (read = 1) or the number moved. Stride scheduling over
    /// the 64 ready apps of lowest pass: the app of lowest pass with room under its cap gives
    /// jobs (its `now` lane first) until its pass, advanced by 1/weight per job, passes the next
    /// app's (at least `quantum`); each job moves into the stream with `fl <app>`, the app's
    /// jobs-in-flight count goes up by it, and settling it gives it back. An app's room is its cap
    /// less its jobs in flight, and, given the worker's slots, its share of them by weight among
    /// the apps with work less what it runs there now (work-conserving: alone, it gets them all).
    /// Bulk-lane jobs move only while `bulkRoom` lasts: an app whose `now` lane is empty and whose
    /// bulk jobs are held back by it keeps its place (it is not dry). An app whose lanes ran
    /// dry leaves the ready set and keeps its pass, and so does a paused one (`x:<app>` set,
    /// read in the same HMGET as its weight: no extra call). When work is left after a full take,
    /// the bell rings for another worker.
    static let take = LuaScript<TakeCall, Never>(
        [
            .key("stream", \.stream), .key("ready", \.ready), .key("sched", \.scheduler), .key("bell", \.bell),
            .argument("group", \.group), .argument("consumer", \.consumer), .number("count", \.count),
            .argument("waitPrefix", \.waitPrefix),
            .number("quantum", \.quantum), .number("read", \.read), .number("slots", \.slots), .number("bulkRoom", \.bulkRoom),
            .list("running", { $0.running }),
        ],
        constants: SchedulerField.constants,
        body: """
            local ranked = redis.call('ZRANGE', ready, 0, 63, 'WITHSCORES')
            local apps, pass, weight, room, held, took, dry, stopped = {}, {}, {}, {}, {}, {}, {}, {}
            local runs, weights = {}, 0
            for i = runningFrom, runningTo, 2 do runs[ARGV[i]] = tonumber(ARGV[i + 1]) end
            for r = 1, #ranked / 2 do
              local app = ranked[2 * r - 1]
              local numbers = redis.call('HMGET', sched, SCHED_WEIGHT .. app, SCHED_MAX_IN_FLIGHT .. app, SCHED_IN_FLIGHT .. app, SCHED_PAUSED .. app)
              if numbers[4] then
                -- Paused (a pause raced this app's admission): it leaves the ready ones, keeping its
                -- pass; its jobs stay in its lanes until it is resumed.
                redis.call('ZREM', ready, app)
                redis.call('HSET', sched, SCHED_PASS .. app, ranked[2 * r])
              else
                local i = #apps + 1
                apps[i] = app
                pass[i] = tonumber(ranked[2 * r])
                weight[i] = math.max(tonumber(numbers[1] or 1) or 1, 1)
                held[i] = math.max(tonumber(numbers[3] or 0) or 0, 0)
                local cap = tonumber(numbers[2] or 0) or 0
                room[i] = cap > 0 and math.max(cap - held[i], 0) or count
                took[i] = 0
                weights = weights + weight[i]
              end
            end
            -- The worker's slots are shared too, by weight among the apps with work: an app whose jobs
            -- are slow (its provider answers late) cannot hold every slot while another waits. Shared by
            -- water-filling: an app that needs fewer slots than its weighted share (what it runs here
            -- and what waits in its lanes) gets what it needs, and the rest is shared again among the
            -- others by weight, so one app's single job does not halve a flooding app's slots.
            if slots > 0 then
              local demand, share, settled = {}, {}, {}
              for i = 1, #apps do
                demand[i] = (runs[apps[i]] or 0)
                if #apps > 1 then
                  demand[i] = demand[i] + redis.call('LLEN', waitPrefix .. apps[i] .. ':now') + redis.call('LLEN', waitPrefix .. apps[i] .. ':bulk')
                end
              end
              local remaining, open, changed = slots, weights, #apps > 1
              while changed do
                changed = false
                for i = 1, #apps do
                  if not settled[i] and demand[i] <= remaining * weight[i] / open then
                    settled[i] = true
                    share[i] = demand[i]
                    remaining = remaining - demand[i]
                    open = open - weight[i]
                    changed = true
                  end
                end
              end
              for i = 1, #apps do
                if not settled[i] then share[i] = math.max(math.floor(remaining * weight[i] / open), 1) end
                room[i] = math.min(room[i], math.max(share[i] - (runs[apps[i]] or 0), 0))
              end
            end
            local moved = 0
            while moved < count do
              local best, second
              for i = 1, #apps do
                if not dry[i] and room[i] > 0 then
                  if not best or pass[i] < pass[best] then
                    second = best
                    best = i
                  elseif not second or pass[i] < pass[second] then
                    second = i
                  end
                end
              end
              if not best then break end
              local want = math.min(count - moved, room[best])
              if second then want = math.min(want, math.max(quantum, math.floor((pass[second] - pass[best]) * weight[best]) + 1)) end
              local got, bulkHeld = 0, false
              for _, lane in ipairs({'now', 'bulk'}) do
                local n = want - got
                if lane == 'bulk' and bulkRoom >= 0 and n > bulkRoom then
                  n = bulkRoom
                  bulkHeld = true
                end
                if n > 0 then
                  local jobs = redis.call('LPOP', waitPrefix .. apps[best] .. ':' .. lane, n)
                  if lane == 'bulk' and jobs and bulkRoom >= 0 then bulkRoom = bulkRoom - #jobs end
                  if jobs then
                    for _, packed in ipairs(jobs) do
                      local fields = cmsgpack.unpack(packed)
                      fields[#fields + 1] = 'fl'
                      fields[#fields + 1] = apps[best]
                      redis.call('XADD', stream, '*', unpack(fields))
                    end
                    got = got + #jobs
                  end
                end
              end
              pass[best] = pass[best] + got / weight[best]
              room[best] = room[best] - got
              took[best] = took[best] + got
              moved = moved + got
              if got < want then
                -- Short of what it wanted: its lanes ran dry, unless the bulk room held bulk jobs back
                -- (then it has no more room in this take; whether any wait is looked at below).
                if bulkHeld then room[best] = 0 else dry[best] = true end
                stopped[best] = true
              end
            end
            local last = 0
            for i = 1, #apps do
              -- An app taken from or held back may have nothing left: it leaves the ready ones too, or
              -- the next job admitted would not ring the bell (the app is still "ready") and a worker
              -- blocked for want of work would sleep out its block time with that job waiting.
              if (took[i] > 0 or stopped[i]) and not dry[i] and redis.call('LLEN', waitPrefix .. apps[i] .. ':now') == 0
                  and redis.call('LLEN', waitPrefix .. apps[i] .. ':bulk') == 0 then
                dry[i] = true
              end
              if took[i] > 0 or dry[i] then
                local app = apps[i]
                if took[i] > 0 then
                  redis.call('HINCRBY', sched, SCHED_IN_FLIGHT .. app, took[i])
                  redis.call('HINCRBY', sched, SCHED_TAKEN .. app, took[i])
                end
                if dry[i] then
                  redis.call('ZREM', ready, app)
                  redis.call('HSET', sched, SCHED_PASS .. app, pass[i])
                else
                  redis.call('ZADD', ready, 'XX', pass[i], app)
                end
                if pass[i] > last then last = pass[i] end
              end
            end
            if moved > 0 then redis.call('HINCRBY', sched, SCHED_WAITING, -moved) end
            -- The virtual time: the lowest pass of an app with work (an app joining starts there).
            local lowest = redis.call('ZRANGE', ready, 0, 0, 'WITHSCORES')
            if lowest[2] then
              redis.call('HSET', sched, SCHED_VIRTUAL_TIME, lowest[2])
            elseif last > 0 then
              redis.call('HSET', sched, SCHED_VIRTUAL_TIME, last)
            end
            if moved == count and lowest[1] then
              if redis.call('RPUSH', bell, 1) > 64 then redis.call('LTRIM', bell, 0, 63) end
            end
            if read == 1 then return redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>') end
            return moved

            """)

    /// An acknowledgement's keys and arguments: the jobs by the app whose count they hold ('' for
    /// none), and the counter they add to (`processed`, or `failed` for dropped jobs).
    struct AckCall {
        let stream: String, counters: String, scheduler: String
        let group: String, counter: String
        /// `processed:<consumer>` (the per-worker share), or '' for none.
        let consumerCounter: String
        let held: [HeldJobs]
    }

    /// The ids of one app's jobs (or of those that hold no app's count, app '').
    struct HeldJobs {
        let app: String
        /// Pushes these jobs got accepted, for the app's total `s:` (0: none counted).
        var accepted: Int = 0
        let ids: [String]
    }

    /// → jobs acknowledged. XACKs each app's jobs and gives back to the app as many
    /// jobs in flight as were still pending (a job another worker settled first counts once),
    /// counting them done for the app and in the queue's totals, atomically.
    static let acknowledge = LuaScript<AckCall, HeldJobs>(
        [
            .key("stream", \.stream), .key("counters", \.counters), .key("sched", \.scheduler),
            .argument("group", \.group), .argument("counter", \.counter), .argument("consumerCounter", \.consumerCounter),
        ], items: \.held, each: [.argument("app", \.app), .argument("accepted", \.accepted), .list("ids", { $0.ids })],
        constants: SchedulerField.constants,
        before: """
            local total = 0

            """,
        eachItem: """
            local acked = redis.call('XACK', stream, group, unpack(ARGV, idsFrom, idsTo))
            if acked > 0 and app ~= '' then
              redis.call('HINCRBY', sched, SCHED_IN_FLIGHT .. app, -acked)
              redis.call('HINCRBY', sched, SCHED_DONE .. app, acked)
              if tonumber(accepted) > 0 then redis.call('HINCRBY', sched, SCHED_SENT .. app, accepted) end
            end
            total = total + acked

            """,
        after: """
            if total > 0 then
              redis.call('HINCRBY', counters, counter, total)
              if consumerCounter ~= '' then redis.call('HINCRBY', counters, consumerCounter, total) end
            end
            return total

            """)
}
