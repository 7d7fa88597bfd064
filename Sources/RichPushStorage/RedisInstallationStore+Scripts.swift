import Hiredis

extension RedisInstallationStore {
    /// KEYS: installation, handle set, owner's set, owner's tag counts, all installations.
    /// ARGV: id, owner, platform, handle, tags (JSON array), updated, max registrations, max
    /// distinct tags (0: none), tag key prefix, installation key prefix, handle key prefix, APNs
    /// environment (empty: production, stored as no field, as registrations made before
    /// environments existed read; a production record keeps the shape it always had), Web Push
    /// keys (`<p256dh>.<auth>`; empty: none, no field), templates (a JSON array; empty: none, no
    /// field, as registrations made before templates existed read), locale (empty: none, no field).
    /// Refuses with a word (owned, handle, registrations, tags) or writes everything and answers
    /// created/updated: the installation, its tag sets, the handle index, the owner's set and
    /// the owner's per-tag counts move together.
    static let saveScript = RedisScript("""
    local id, owner = ARGV[1], ARGV[2]
    local old = redis.call('HMGET', KEYS[1], 'owner', 'handle', 'tags')
    if old[1] and old[1] ~= owner then return 'owned' end
    for _, other in ipairs(redis.call('SMEMBERS', KEYS[2])) do
      if other ~= id then
        local otherOwner = redis.call('HGET', ARGV[10] .. other, 'owner')
        if otherOwner and otherOwner ~= owner then return 'handle' end
      end
    end
    local maxRegistrations = tonumber(ARGV[7])
    if not old[1] and maxRegistrations > 0 and redis.call('SISMEMBER', KEYS[3], id) == 0 and redis.call('SCARD', KEYS[3]) >= maxRegistrations then
      return 'registrations'
    end
    local oldTags, newTags = {}, {}
    if old[3] then for _, tag in ipairs(cjson.decode(old[3])) do oldTags[tag] = true end end
    for _, tag in ipairs(cjson.decode(ARGV[5])) do newTags[tag] = true end
    local distinct = redis.call('HLEN', KEYS[4])
    local after = distinct
    for tag in pairs(newTags) do
      if not oldTags[tag] and not redis.call('HGET', KEYS[4], tag) then after = after + 1 end
    end
    for tag in pairs(oldTags) do
      if not newTags[tag] and tonumber(redis.call('HGET', KEYS[4], tag) or '0') <= 1 then after = after - 1 end
    end
    local maxTags = tonumber(ARGV[8])
    if maxTags > 0 and after > maxTags and after > distinct then return 'tags' end
    for tag in pairs(oldTags) do
      if not newTags[tag] then
        redis.call('SREM', ARGV[9] .. tag, id)
        if redis.call('HINCRBY', KEYS[4], tag, -1) <= 0 then redis.call('HDEL', KEYS[4], tag) end
      end
    end
    for tag in pairs(newTags) do
      if not oldTags[tag] then
        redis.call('SADD', ARGV[9] .. tag, id)
        redis.call('HINCRBY', KEYS[4], tag, 1)
      end
    end
    if old[2] and old[2] ~= ARGV[4] then redis.call('SREM', ARGV[11] .. old[2], id) end
    redis.call('HSET', KEYS[1], 'platform', ARGV[3], 'handle', ARGV[4], 'tags', ARGV[5], 'owner', owner, 'updated', ARGV[6])
    if ARGV[12] == '' then redis.call('HDEL', KEYS[1], 'environment') else redis.call('HSET', KEYS[1], 'environment', ARGV[12]) end
    if ARGV[13] == '' then redis.call('HDEL', KEYS[1], 'keys') else redis.call('HSET', KEYS[1], 'keys', ARGV[13]) end
    if ARGV[14] == '' then redis.call('HDEL', KEYS[1], 'templates') else redis.call('HSET', KEYS[1], 'templates', ARGV[14]) end
    if ARGV[15] == '' then redis.call('HDEL', KEYS[1], 'locale') else redis.call('HSET', KEYS[1], 'locale', ARGV[15]) end
    redis.call('SADD', KEYS[2], id)
    redis.call('SADD', KEYS[3], id)
    redis.call('SADD', KEYS[5], id)
    if old[1] then return 'updated' end
    return 'created'
    """)

    /// KEYS: installation, all installations. ARGV: id, tag key prefix, handle key prefix, owner
    /// set prefix, owner tag-count prefix. Undoes everything `saveScript` wrote; 0 if it was gone.
    static let removeScript = RedisScript("""
    local id = ARGV[1]
    local fields = redis.call('HMGET', KEYS[1], 'owner', 'handle', 'tags')
    redis.call('SREM', KEYS[2], id)
    if not fields[1] then return 0 end
    local owner = fields[1]
    if fields[3] then
      for _, tag in ipairs(cjson.decode(fields[3])) do
        redis.call('SREM', ARGV[2] .. tag, id)
        if redis.call('HINCRBY', ARGV[5] .. owner, tag, -1) <= 0 then redis.call('HDEL', ARGV[5] .. owner, tag) end
      end
    end
    if fields[2] then redis.call('SREM', ARGV[3] .. fields[2], id) end
    redis.call('SREM', ARGV[4] .. owner, id)
    redis.call('DEL', KEYS[1])
    return 1
    """)
}
