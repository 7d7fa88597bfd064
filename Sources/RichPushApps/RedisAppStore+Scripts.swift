import Hiredis

extension RedisAppStore {
    /// How ``writeScript`` treats an app that is not there yet.
    enum WriteMode: String {
        /// Create it; refuse (-2) when it exists.
        case create
        /// Change it; refuse (-1) when it does not exist.
        case update
        /// Change it, creating it first if need be (the default app).
        case upsert
    }

    /// KEYS: the app's hash, the set of ids. ARGV: id, change channel, now (ms), mode, the change as
    /// JSON `{"name": …, "set": {field: value}, "remove": [field]}`. Returns the new version, -1 (no
    /// such app) or -2 (exists already).
    static let writeScript = RedisScript("""
    local app, all = KEYS[1], KEYS[2]
    local id, channel, now, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
    local change = cjson.decode(ARGV[5])
    local exists = redis.call('EXISTS', app) == 1
    if exists and mode == 'create' then return -2 end
    if not exists and mode == 'update' then return -1 end
    if not exists then redis.call('HSET', app, 'created', now, 'name', change.name) end
    for _, field in ipairs(change.remove) do redis.call('HDEL', app, field) end
    for field, value in pairs(change.set) do redis.call('HSET', app, field, value) end
    redis.call('HSET', app, 'updated', now)
    local version = redis.call('HINCRBY', app, 'version', 1)
    redis.call('SADD', all, id)
    redis.call('PUBLISH', channel, id)
    return version
    """)

    /// KEYS: the app's hash, the set of ids. ARGV: id, change channel. Returns 1, or 0 when there was no app.
    static let removeScript = RedisScript("""
    local app, all = KEYS[1], KEYS[2]
    local id, channel = ARGV[1], ARGV[2]
    if redis.call('DEL', app) == 0 then return 0 end
    redis.call('SREM', all, id)
    redis.call('PUBLISH', channel, id)
    return 1
    """)

    /// KEYS: the app's hash. ARGV: the version read, the re-sealed fields as JSON `{field: value}`.
    /// Writes them only if the app did not change since it was read (1), else 0.
    static let resealScript = RedisScript("""
    local app = KEYS[1]
    local version, fields = ARGV[1], cjson.decode(ARGV[2])
    if redis.call('HGET', app, 'version') ~= version then return 0 end
    for field, value in pairs(fields) do redis.call('HSET', app, field, value) end
    return 1
    """)
}
