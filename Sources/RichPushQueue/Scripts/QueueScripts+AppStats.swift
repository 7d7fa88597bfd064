import Hiredis

/// The read behind per-app queue numbers (`richpush stats`, the worker's per-app gauges).
extension QueueScripts {
    /// A partition's scheduler keys, and apps to report whether or not they are busy there.
    struct AppStatsCall {
        let ready: String, scheduler: String, waitPrefix: String
        /// The prefix of the apps' failed-push totals (``JobQueueConfiguration/failuresPrefix``).
        let failuresPrefix: String
        /// Reported even when idle in this partition (their totals complete the numbers of apps
        /// busy in another partition).
        let also: [String]
    }

    /// → one row per app with jobs waiting in its lanes or in flight (`f:` above 0) or paused, and
    /// per app of `also`: `{app, now, bulk, enq, inFlight, taken, done, weight, cap, paused, retried, deadLettered, failures}`, where
    /// `now`/`bulk` are its lanes' lengths, `enq` the enqueue time (ms) of the older of the jobs
    /// at their heads (0: none waits) and `failures` its failed pushes as `{code, total, …}`.
    /// Read only; its cost grows with the apps the hash names (one HGETALL) and the reported
    /// ones (two LLEN, two LRANGE of one, and one HGETALL of at most 33 fields each), not with the jobs.
    static let appStats = LuaScript<AppStatsCall, Never>(
        [
            .key("ready", \.ready), .key("sched", \.scheduler), .argument("waitPrefix", \.waitPrefix),
            .argument("failuresPrefix", \.failuresPrefix), .list("also", { $0.also }),
        ],
        constants: SchedulerField.constants,
        body: """
            local flat = redis.call('HGETALL', sched)
            local numbers = {}
            for i = 1, #flat, 2 do numbers[flat[i]] = flat[i + 1] end
            local apps, seen = {}, {}
            local function note(app)
              if not seen[app] then
                seen[app] = true
                apps[#apps + 1] = app
              end
            end
            for _, app in ipairs(redis.call('ZRANGE', ready, 0, -1)) do note(app) end
            for i = 1, #flat, 2 do
              local kind = string.sub(flat[i], 1, 2)
              if (kind == SCHED_IN_FLIGHT and (tonumber(flat[i + 1]) or 0) > 0) or kind == SCHED_PAUSED then note(string.sub(flat[i], 3)) end
            end
            local asked = {}
            for i = alsoFrom, alsoTo do
              asked[ARGV[i]] = true
              note(ARGV[i])
            end
            local rows = {}
            for _, app in ipairs(apps) do
              local row = {app}
              local oldest = 0
              for _, lane in ipairs({'now', 'bulk'}) do
                local key = waitPrefix .. app .. ':' .. lane
                row[#row + 1] = redis.call('LLEN', key)
                local head = redis.call('LRANGE', key, 0, 0)[1]
                if head then
                  local fields = cmsgpack.unpack(head)
                  for j = 1, #fields - 1, 2 do
                    if fields[j] == 'enq' then
                      local enq = tonumber(fields[j + 1]) or 0
                      if enq > 0 and (oldest == 0 or enq < oldest) then oldest = enq end
                    end
                  end
                end
              end
              row[#row + 1] = oldest
              for _, name in ipairs({SCHED_IN_FLIGHT, SCHED_TAKEN, SCHED_DONE, SCHED_WEIGHT, SCHED_MAX_IN_FLIGHT, SCHED_PAUSED, SCHED_RETRIED, SCHED_DEAD_LETTERED}) do row[#row + 1] = tonumber(numbers[name .. app] or 0) or 0 end
              row[#row + 1] = redis.call('HGETALL', failuresPrefix .. app)
              row[#row + 1] = tonumber(numbers[SCHED_SENT .. app] or 0) or 0
              -- An app stays ready until a take finds its lanes dry: with nothing waiting nor in flight
              -- it is not busy, and is left out unless asked for.
              if asked[app] or row[2] + row[3] > 0 or row[5] > 0 or row[10] > 0 then rows[#rows + 1] = row end
            end
            return rows

            """)
}
