package import Hiredis
package import RichPushQueue

/// Between a benchmark's phases: drops the jobs still waiting in a partition (every app's fair
/// lanes, and the stream's entries not yet delivered to the group), so that the next phase starts
/// on an empty queue instead of waiting minutes for a flood's backlog to drain. Jobs already
/// delivered to a worker finish as usual. Never for a real deployment: what it drops is not sent.
package enum QueueBacklogSkip {
    /// One partition's keys and its group.
    package struct Call {
        let stream: String, ready: String, scheduler: String
        let waitPrefix: String, group: String
    }

    /// The jobs dropped in one partition: its lanes' and its group's lag.
    package static let script = LuaScript<Call, Never>(
        [
            .key("stream", \.stream), .key("ready", \.ready), .key("scheduler", \.scheduler),
            .argument("waitPrefix", \.waitPrefix), .argument("group", \.group),
        ],
        constants: SchedulerField.constants,
        body: """
            local dropped = 0
            for _, app in ipairs(redis.call('ZRANGE', ready, 0, -1)) do
              for _, lane in ipairs({'now', 'bulk'}) do
                local key = waitPrefix .. app .. ':' .. lane
                dropped = dropped + redis.call('LLEN', key)
                redis.call('DEL', key)
              end
              redis.call('ZREM', ready, app)
            end
            if dropped > 0 then redis.call('HINCRBY', scheduler, SCHED_WAITING, -dropped) end
            if redis.call('EXISTS', stream) == 1 then
              local groups = redis.call('XINFO', 'GROUPS', stream)
              for _, entry in ipairs(groups) do
                local name, lag
                for i = 1, #entry, 2 do
                  if entry[i] == 'name' then name = entry[i + 1] elseif entry[i] == 'lag' then lag = entry[i + 1] end
                end
                if name == group and type(lag) == 'number' then dropped = dropped + lag end
              end
              redis.call('XGROUP', 'SETID', stream, group, '$')
            end
            return dropped

            """)

    /// Drops the waiting jobs of every partition (one script call each, in one round trip); how many.
    package static func run(_ configurations: [JobQueueConfiguration], redis: any RedisClient) async throws -> Int {
        let replies = try await redis.run(
            script,
            calls: configurations.map {
                Call(stream: $0.streamKey, ready: $0.readyKey, scheduler: $0.schedulerKey, waitPrefix: $0.waitPrefix, group: $0.group)
            })
        return try replies.reduce(0) { $0 + (try $1.throwingError().int ?? 0) }
    }

    /// Jobs delivered to a worker and not yet settled, in every partition.
    package static func inFlight(_ configurations: [JobQueueConfiguration], redis: any RedisClient) async throws -> Int {
        var pending = 0
        for configuration in configurations {
            let reply = try await redis.send("XPENDING", configuration.streamKey, configuration.group)
            pending += reply.array?.first?.int ?? 0
        }
        return pending
    }
}
