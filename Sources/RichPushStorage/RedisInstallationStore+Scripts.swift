import Hiredis

extension RedisInstallationStore {
    /// A registration's keys (the installation, its handle's set, the owner's set and per-tag
    /// counts, all installations) and values; the limits (0: none), the key prefixes of tags,
    /// installations and handles, and the optional fields ('' for none).
    struct SaveCall {
        let installation: String, handleSet: String, owned: String, tagCounts: String, all: String
        let id: String, owner: String, platform: String, handle: String
        /// A JSON array.
        let tags: String
        let updated: Int64, maxRegistrations: Int, maxTags: Int
        let tagPrefix: String, installationPrefix: String, handlePrefix: String
        let environment: String, webPushKeys: String, templates: String, locale: String
    }

    /// APNs environment (empty: production, stored as no field, as registrations made before
    /// environments existed read; a production record keeps the shape it always had), Web Push
    /// keys (`<p256dh>.<auth>`; empty: none, no field), templates (a JSON array; empty: none, no
    /// field, as registrations made before templates existed read), locale (empty: none, no field).
    /// Refuses with a word (owned, handle, registrations, tags) or writes everything and answers
    /// created/updated: the installation, its tag sets, the handle index, the owner's set and
    /// the owner's per-tag counts move together.
    static let saveScript = LuaScript<SaveCall, Never>(
        [
            .key("installation", \.installation), .key("handleSet", \.handleSet), .key("owned", \.owned), .key("tagCounts", \.tagCounts),
            .key("all", \.all),
            .argument("id", \.id), .argument("owner", \.owner), .argument("platform", \.platform), .argument("handle", \.handle),
            .argument("tags", \.tags),
            .argument("updated", \.updated), .number("maxRegistrations", \.maxRegistrations), .number("maxTags", \.maxTags),
            .argument("tagPrefix", \.tagPrefix),
            .argument("installationPrefix", \.installationPrefix), .argument("handlePrefix", \.handlePrefix),
            .argument("environment", \.environment),
            .argument("webPushKeys", \.webPushKeys), .argument("templates", \.templates), .argument("locale", \.locale),
        ],
        body: """
            local old = redis.call('HMGET', installation, 'owner', 'handle', 'tags')
            if old[1] and old[1] ~= owner then return 'owned' end
            for _, other in ipairs(redis.call('SMEMBERS', handleSet)) do
              if other ~= id then
                local otherOwner = redis.call('HGET', installationPrefix .. other, 'owner')
                if otherOwner and otherOwner ~= owner then return 'handle' end
              end
            end
            if not old[1] and maxRegistrations > 0 and redis.call('SISMEMBER', owned, id) == 0 and redis.call('SCARD', owned) >= maxRegistrations then
              return 'registrations'
            end
            local oldTags, newTags = {}, {}
            if old[3] then for _, tag in ipairs(cjson.decode(old[3])) do oldTags[tag] = true end end
            for _, tag in ipairs(cjson.decode(tags)) do newTags[tag] = true end
            local distinct = redis.call('HLEN', tagCounts)
            local after = distinct
            for tag in pairs(newTags) do
              if not oldTags[tag] and not redis.call('HGET', tagCounts, tag) then after = after + 1 end
            end
            for tag in pairs(oldTags) do
              if not newTags[tag] and tonumber(redis.call('HGET', tagCounts, tag) or '0') <= 1 then after = after - 1 end
            end
            if maxTags > 0 and after > maxTags and after > distinct then return 'tags' end
            for tag in pairs(oldTags) do
              if not newTags[tag] then
                redis.call('SREM', tagPrefix .. tag, id)
                if redis.call('HINCRBY', tagCounts, tag, -1) <= 0 then redis.call('HDEL', tagCounts, tag) end
              end
            end
            for tag in pairs(newTags) do
              if not oldTags[tag] then
                redis.call('SADD', tagPrefix .. tag, id)
                redis.call('HINCRBY', tagCounts, tag, 1)
              end
            end
            if old[2] and old[2] ~= handle then redis.call('SREM', handlePrefix .. old[2], id) end
            redis.call('HSET', installation, 'platform', platform, 'handle', handle, 'tags', tags, 'owner', owner, 'updated', updated)
            if environment == '' then redis.call('HDEL', installation, 'environment') else redis.call('HSET', installation, 'environment', environment) end
            if webPushKeys == '' then redis.call('HDEL', installation, 'keys') else redis.call('HSET', installation, 'keys', webPushKeys) end
            if templates == '' then redis.call('HDEL', installation, 'templates') else redis.call('HSET', installation, 'templates', templates) end
            if locale == '' then redis.call('HDEL', installation, 'locale') else redis.call('HSET', installation, 'locale', locale) end
            redis.call('SADD', handleSet, id)
            redis.call('SADD', owned, id)
            redis.call('SADD', all, id)
            if old[1] then return 'updated' end
            return 'created'

            """)

    /// A removal's keys (the installation, all installations), its id and the key prefixes of
    /// tags, handles, owners' sets and owners' tag counts.
    /// `ifHandle`: remove only while the installation still has this handle ("" for any).
    struct RemoveCall {
        let installation: String, all: String, id: String, tagPrefix: String, handlePrefix: String, ownedPrefix: String,
            tagCountsPrefix: String
        let ifHandle: String
    }

    func removeCall(id: String, ifHandle handle: String = "") -> RemoveCall {
        RemoveCall(
            installation: keys.installation(id), all: keys.allInstallations, id: id, tagPrefix: keys.tagPrefix,
            handlePrefix: keys.handlePrefix,
            ownedPrefix: keys.ownedPrefix, tagCountsPrefix: keys.userTagsPrefix, ifHandle: handle)
    }

    /// Undoes everything `saveScript` wrote; 0 if it was gone, or if `ifHandle` is set and the
    /// installation has another handle now (its device registered a new one meanwhile).
    static let removeScript = LuaScript<RemoveCall, Never>(
        [
            .key("installation", \.installation), .key("all", \.all), .argument("id", \.id), .argument("tagPrefix", \.tagPrefix),
            .argument("handlePrefix", \.handlePrefix), .argument("ownedPrefix", \.ownedPrefix),
            .argument("tagCountsPrefix", \.tagCountsPrefix),
            .argument("ifHandle", \.ifHandle),
        ],
        body: """
            local fields = redis.call('HMGET', installation, 'owner', 'handle', 'tags')
            if fields[1] and ifHandle ~= '' and fields[2] ~= ifHandle then return 0 end
            redis.call('SREM', all, id)
            if not fields[1] then return 0 end
            local owner = fields[1]
            if fields[3] then
              for _, tag in ipairs(cjson.decode(fields[3])) do
                redis.call('SREM', tagPrefix .. tag, id)
                if redis.call('HINCRBY', tagCountsPrefix .. owner, tag, -1) <= 0 then redis.call('HDEL', tagCountsPrefix .. owner, tag) end
              end
            end
            if fields[2] then redis.call('SREM', handlePrefix .. fields[2], id) end
            redis.call('SREM', ownedPrefix .. owner, id)
            redis.call('DEL', installation)
            return 1

            """)
}
