import Hiredis

/// The queue's Lua scripts. Each touches only keys of one partition (one hash tag), so it runs
/// atomically on a single Redis or a Cluster slot; keys are always passed in KEYS.
enum QueueScripts {
    /// Copies an entry's fields without the ones the script is about to set again.
    private static let stripFields = """
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

    /// KEYS: stream, idempotency key. ARGV: ttl ms, fields…  → {id, 1 if added else 0}
    static let enqueueOnce = RedisScript("""
    local existing = redis.call('GET', KEYS[2])
    if existing then return {existing, 0} end
    local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 2))
    redis.call('SET', KEYS[2], id, 'PX', ARGV[1])
    return {id, 1}
    """)

    /// KEYS: stream, delayed, counters. ARGV: group, id, due ms, attempt, error.
    /// Moves the job to the delayed set (with its attempt count and error) and acks it, atomically.
    static let retry = RedisScript(stripFields + "\n" + """
    local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
    if entry[1] then
      local fields = strip(entry[1][2], {attempt = true, err = true, origin = true})
      local origin = ARGV[2]
      for i = 1, #entry[1][2], 2 do if entry[1][2][i] == 'origin' then origin = entry[1][2][i + 1] end end
      fields[#fields + 1] = 'attempt'; fields[#fields + 1] = ARGV[4]
      fields[#fields + 1] = 'origin'; fields[#fields + 1] = origin
      fields[#fields + 1] = 'err'; fields[#fields + 1] = ARGV[5]
      redis.call('ZADD', KEYS[2], ARGV[3], cmsgpack.pack(fields))
      redis.call('HINCRBY', KEYS[3], 'retried', 1)
    end
    return redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
    """)

    /// KEYS: delayed. ARGV: due time ms, then the job's fields. Keeps the job as a due retry is
    /// kept (its fields packed, scored by when it is due).
    static let schedule = RedisScript("""
    return redis.call('ZADD', KEYS[1], ARGV[1], cmsgpack.pack({unpack(ARGV, 2, #ARGV)}))
    """)

    /// KEYS: stream, delayed. ARGV: now ms, max count → number promoted.
    /// Moves due retries back into the stream as new entries.
    static let promote = RedisScript("""
    local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
    for _, member in ipairs(due) do
      redis.call('XADD', KEYS[1], '*', unpack(cmsgpack.unpack(member)))
      redis.call('ZREM', KEYS[2], member)
    end
    return #due
    """)

    /// KEYS: stream, dead, counters. ARGV: group, id, error, now ms → 1, or 0 when the job was
    /// no longer pending (another worker settled it): copies the job to the dead letters with its
    /// error and acks it, atomically, once.
    static let deadLetter = RedisScript(stripFields + "\n" + """
    if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
    local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
    local fields = {}
    local origin = ARGV[2]
    if entry[1] then
      for i = 1, #entry[1][2], 2 do if entry[1][2][i] == 'origin' then origin = entry[1][2][i + 1] end end
      fields = strip(entry[1][2], {err = true, origin = true, deadAt = true})
    end
    fields[#fields + 1] = 'origin'; fields[#fields + 1] = origin
    fields[#fields + 1] = 'err'; fields[#fields + 1] = ARGV[3]
    fields[#fields + 1] = 'deadAt'; fields[#fields + 1] = ARGV[4]
    redis.call('XADD', KEYS[2], '*', unpack(fields))
    redis.call('HINCRBY', KEYS[3], 'dead', 1)
    return 1
    """)

    /// KEYS: stream. ARGV: group, consumer, min idle ms, count, max deliveries → {claimed entries,
    /// poison entries, poison ids, their delivery counts}. Claims for the consumer the jobs idle past the
    /// visibility timeout; those already delivered max-deliveries times (poison messages) are
    /// claimed too but returned apart, for the worker to dead-letter as it does a job that failed
    /// for good (its handler's `willDeadLetter` first).
    static let reclaim = RedisScript("""
    local pending = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', ARGV[4])
    local claim, poison, counts = {}, {}, {}
    for _, p in ipairs(pending) do
      if tonumber(p[4]) >= tonumber(ARGV[5]) then
        poison[#poison + 1] = p[1]
        counts[#counts + 1] = p[4]
      else
        claim[#claim + 1] = p[1]
      end
    end
    local claimed, poisoned = {}, {}
    if #claim > 0 then claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], unpack(claim)) end
    if #poison > 0 then poisoned = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], unpack(poison)) end
    return {claimed, poisoned, poison, counts}
    """)

    /// KEYS: stream. ARGV: cutoff id. Trims entries older than the cutoff, but never an entry that
    /// is still pending or not yet delivered to every group → number trimmed.
    static let trim = RedisScript("""
    local function before(a, b)
      local ams, aseq = string.match(a, '(%d+)-(%d+)')
      local bms, bseq = string.match(b, '(%d+)-(%d+)')
      ams, aseq, bms, bseq = tonumber(ams), tonumber(aseq), tonumber(bms), tonumber(bseq)
      return ams < bms or (ams == bms and aseq < bseq)
    end
    if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
    local cutoff = ARGV[1]
    for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
      local info = {}
      for i = 1, #group, 2 do info[group[i]] = group[i + 1] end
      local last = info['last-delivered-id']
      if last and before(last, cutoff) then cutoff = last end
      local summary = redis.call('XPENDING', KEYS[1], info['name'])
      if summary[2] and before(summary[2], cutoff) then cutoff = summary[2] end
    end
    return redis.call('XTRIM', KEYS[1], 'MINID', cutoff)
    """)

    /// KEYS: dead, stream. ARGV: ids… → the new stream entries ({id, fields}). Moves dead letters
    /// back into the stream as fresh jobs (attempt 0, error cleared), keeping their origin id.
    static let replayDead = RedisScript(stripFields + "\n" + """
    local moved = {}
    for _, id in ipairs(ARGV) do
      local entry = redis.call('XRANGE', KEYS[1], id, id)
      if entry[1] then
        local fields = strip(entry[1][2], {err = true, deadAt = true, attempt = true})
        moved[#moved + 1] = {redis.call('XADD', KEYS[2], '*', unpack(fields)), fields}
        redis.call('XDEL', KEYS[1], id)
      end
    end
    return moved
    """)

    /// KEYS: stream, counters. ARGV: group, min idle ms, only this consumer ('' = any), keep this
    /// one (''), now ms. Deletes consumers with nothing pending, atomically (a consumer with pending
    /// entries is never deleted: DELCONSUMER would drop its jobs from the PEL) → deleted names.
    /// A worker leaving cleanly (`only`) keeps its `processed:<name>` share, stamped `exited:<name>`;
    /// the stale sweep (`only` = '') folds the shares of consumers it deletes and of workers that
    /// exited longer than min idle ago into `processed:(departed)`, so the counters hold one field
    /// per recent worker, not one per worker ever started.
    static let removeIdleConsumers = RedisScript("""
    local function fold(name)
      local share = redis.call('HGET', KEYS[2], 'processed:' .. name)
      if share then
        redis.call('HINCRBY', KEYS[2], 'processed:(departed)', share)
        redis.call('HDEL', KEYS[2], 'processed:' .. name)
      end
      redis.call('HDEL', KEYS[2], 'exited:' .. name)
    end
    local removed = {}
    if redis.call('EXISTS', KEYS[1]) == 1 then
      for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
        local info = {}
        for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
        local name = info['name']
        if info['pending'] == 0 and info['idle'] > tonumber(ARGV[2]) and (ARGV[3] == '' or ARGV[3] == name) and ARGV[4] ~= name then
          redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
          if ARGV[3] == '' then fold(name) else redis.call('HSET', KEYS[2], 'exited:' .. name, ARGV[5]) end
          removed[#removed + 1] = name
        end
      end
    end
    if ARGV[3] == '' then
      local counters = redis.call('HGETALL', KEYS[2])
      for i = 1, #counters, 2 do
        local field = counters[i]
        if string.sub(field, 1, 7) == 'exited:' and tonumber(ARGV[5]) - tonumber(counters[i + 1]) > tonumber(ARGV[2]) then
          fold(string.sub(field, 8))
        end
      end
    end
    return removed
    """)

}
