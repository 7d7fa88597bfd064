import Hiredis
import RichPushQueue

/// Between a benchmark's phases: drops the jobs still waiting in a partition (every scope's fair
/// lanes, and the stream's entries not yet delivered to the group), so that the next phase starts
/// on an empty queue instead of waiting minutes for a flood's backlog to drain. Jobs already
/// delivered to a worker finish as usual. Never for a real deployment: what it drops is not sent.
enum QueueBacklogSkip {
    /// KEYS: stream, ready, sched; ARGV: waitPrefix, group → jobs dropped (lanes + the group's lag).
    static let lua = """
    local dropped = 0
    for _, scope in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      for _, lane in ipairs({'now', 'bulk'}) do
        local key = ARGV[1] .. scope .. ':' .. lane
        dropped = dropped + redis.call('LLEN', key)
        redis.call('DEL', key)
      end
      redis.call('ZREM', KEYS[2], scope)
    end
    if dropped > 0 then redis.call('HINCRBY', KEYS[3], 'waiting', -dropped) end
    if redis.call('EXISTS', KEYS[1]) == 1 then
      local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
      for _, group in ipairs(groups) do
        local name, lag
        for i = 1, #group, 2 do
          if group[i] == 'name' then name = group[i + 1] elseif group[i] == 'lag' then lag = group[i + 1] end
        end
        if name == ARGV[2] and type(lag) == 'number' then dropped = dropped + lag end
      end
      redis.call('XGROUP', 'SETID', KEYS[1], ARGV[2], '$')
    end
    return dropped

    """

    /// Drops the waiting jobs of every partition; how many.
    static func run(_ configurations: [JobQueueConfiguration], redis: any RedisClient) async throws -> Int {
        var dropped = 0
        for configuration in configurations {
            let reply = try await redis.send("EVAL", lua, 3, configuration.streamKey, configuration.readyKey, configuration.schedulerKey,
                                             configuration.waitPrefix, configuration.group)
            dropped += try reply.throwingError().int ?? 0
        }
        return dropped
    }

    /// Jobs delivered to a worker and not yet settled, in every partition.
    static func inFlight(_ configurations: [JobQueueConfiguration], redis: any RedisClient) async throws -> Int {
        var pending = 0
        for configuration in configurations {
            let reply = try await redis.send("XPENDING", configuration.streamKey, configuration.group)
            pending += reply.array?.first?.int ?? 0
        }
        return pending
    }
}
