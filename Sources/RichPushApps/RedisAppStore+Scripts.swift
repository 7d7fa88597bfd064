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

    /// An app's hash and the set of ids; its id, the change channel, now (ms), the mode and the
    /// change as JSON `{"name": …, "set": {field: value}, "remove": [field]}`.
    struct WriteCall {
        let app: String, all: String, id: String, channel: String, now: Int64, mode: String, change: String
    }

    /// Returns the new version, -1 (no such app) or -2 (exists already).
    static let writeScript = LuaScript<WriteCall, Never>(
        [
            .key("app", \.app), .key("all", \.all), .argument("id", \.id), .argument("channel", \.channel), .argument("now", \.now),
            .argument("mode", \.mode), .argument("changeJSON", \.change),
        ],
        body: """
            local change = cjson.decode(changeJSON)
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

    /// An app's hash and the set of ids; its id and the change channel.
    struct RemoveCall {
        let app: String, all: String, id: String, channel: String
    }

    /// Returns 1, or 0 when there was no app.
    static let removeScript = LuaScript<RemoveCall, Never>(
        [
            .key("app", \.app), .key("all", \.all), .argument("id", \.id), .argument("channel", \.channel),
        ],
        body: """
            if redis.call('DEL', app) == 0 then return 0 end
            redis.call('SREM', all, id)
            redis.call('PUBLISH', channel, id)
            return 1

            """)

    /// An app's hash, the version read, and the re-sealed fields as JSON `{field: value}`.
    struct ResealCall {
        let app: String, version: String, fields: String
    }

    /// Writes the fields only if the app did not change since it was read (1), else 0.
    static let resealScript = LuaScript<ResealCall, Never>(
        [.key("app", \.app), .argument("version", \.version), .argument("fieldsJSON", \.fields)],
        body: """
            local fields = cjson.decode(fieldsJSON)
            if redis.call('HGET', app, 'version') ~= version then return 0 end
            for field, value in pairs(fields) do redis.call('HSET', app, field, value) end
            return 1

            """)
}
