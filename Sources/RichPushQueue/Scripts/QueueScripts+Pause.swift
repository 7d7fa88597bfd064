import Hiredis

/// Pausing an app under fair scheduling: its jobs stay in its lanes, nothing is lost
/// nor dead-lettered, and no take moves them while `x:<app>` is set in the partition's
/// scheduler hash (the take reads it with the app's weight and cap; an admission of a paused
/// app does not make it ready). Each script touches one partition's keys, which share its hash tag.
extension QueueScripts {
    /// One partition's scheduler keys and the app.
    struct PauseCall {
        let ready: String, scheduler: String, bell: String, waitPrefix: String
        let app: String
    }

    static func pauseSlots() -> [LuaSlot<PauseCall>] {
        [
            .key("ready", \.ready), .key("sched", \.scheduler), .key("bell", \.bell), .argument("waitPrefix", \.waitPrefix),
            .argument("app", \.app),
        ]
    }

    /// → 1 when it was running, 0 when already paused. Sets the flag and takes the app out of
    /// the ready ones, keeping its pass (as an app whose lanes ran dry): jobs already taken
    /// finish, the waiting ones stay where they are.
    static let pause = LuaScript<PauseCall, Never>(
        pauseSlots(),
        constants: SchedulerField.constants,
        body: """
            if redis.call('HGET', sched, SCHED_PAUSED .. app) then return 0 end
            redis.call('HSET', sched, SCHED_PAUSED .. app, 1)
            local pass = redis.call('ZSCORE', ready, app)
            if pass then
              redis.call('ZREM', ready, app)
              redis.call('HSET', sched, SCHED_PASS .. app, pass)
            end
            return 1

            """)

    /// → 1 when it was paused, 0 when it was not. Clears the flag; an app with jobs waiting
    /// joins the ready ones at the virtual time (or its own pass, if later: a pause earns no
    /// burst) and rings the bell for a worker waiting with nothing to take.
    static let resume = LuaScript<PauseCall, Never>(
        pauseSlots(),
        constants: SchedulerField.constants,
        body: """
            if redis.call('HDEL', sched, SCHED_PAUSED .. app) == 0 then return 0 end
            local waiting = redis.call('LLEN', waitPrefix .. app .. ':now') + redis.call('LLEN', waitPrefix .. app .. ':bulk')
            if waiting > 0 and not redis.call('ZSCORE', ready, app) then
              local at = redis.call('HMGET', sched, SCHED_VIRTUAL_TIME, SCHED_PASS .. app)
              redis.call('ZADD', ready, math.max(tonumber(at[1] or 0), tonumber(at[2] or 0)), app)
              if redis.call('RPUSH', bell, 1) > 64 then redis.call('LTRIM', bell, 0, 63) end
            end
            return 1

            """)
}
