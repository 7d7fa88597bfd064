import Foundation
package import Hiredis
package import RichPushCore

/// Users with their bcrypt hashes, and the login throttle (`+Throttle`), in Redis.
package struct RedisUserStore: UserStore {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func user(named name: String) async throws -> StoredUser? {
        let fields = try await redis.send("HMGET", keys.user(name), "hash", "role").array ?? []
        guard fields.count == 2, let hash = fields[0].string, let role = fields[1].string.flatMap(User.Role.init) else { return nil }
        return StoredUser(user: User(name: name, role: role), passwordHash: hash)
    }

    package func create(_ user: User, passwordHash: String) async throws -> Bool {
        try await redis.run(
            Self.createScript,
            CreateCall(
                user: keys.user(user.name), users: keys.users, name: user.name, hash: passwordHash,
                role: user.role.rawValue, created: Int(Date().timeIntervalSince1970))
        ).int == 1
    }

    /// A new user's hash and the set of names; the name, password hash, role and creation time (s).
    struct CreateCall {
        let user: String, users: String, name: String, hash: String, role: String, created: Int
    }

    /// Adds the user only if the name is free, all fields at once.
    static let createScript = LuaScript<CreateCall, Never>(
        [
            .key("user", \.user), .key("users", \.users), .argument("name", \.name), .argument("hash", \.hash), .argument("role", \.role),
            .argument("created", \.created),
        ],
        body: """
            if redis.call('EXISTS', user) == 1 then return 0 end
            redis.call('HSET', user, 'hash', hash, 'role', role, 'created', created)
            redis.call('SADD', users, name)
            return 1

            """)

    package func update(name: String, passwordHash: String?, role: User.Role?) async throws -> Bool {
        guard try await redis.send("EXISTS", keys.user(name)).int == 1 else { return false }
        var command = RedisCommand("HSET", keys.user(name))
        if let passwordHash { command.append("hash"); command.append(passwordHash) }
        if let role { command.append("role"); command.append(role.rawValue) }
        if command.count > 2 {
            try await redis.sendAll([command, RedisCommand("PUBLISH", keys.credentialChanges, "user:\(keys.credentialName(name))")])
        }
        return true
    }

    package func remove(name: String) async throws -> Bool {
        let replies = try await redis.sendAll([
            RedisCommand("DEL", keys.user(name)), RedisCommand("SREM", keys.users, name),
            RedisCommand("PUBLISH", keys.credentialChanges, "user:\(keys.credentialName(name))"),
        ])
        _ = try await unlock(user: name, address: nil)
        return replies[0].int == 1
    }

    package func list() async throws -> [User] {
        let names = (try await redis.send("SMEMBERS", keys.users).array ?? []).compactMap(\.string).sorted()
        let roles = try await redis.sendAll(names.map { RedisCommand("HGET", keys.user($0), "role") })
        return zip(names, roles).compactMap { name, role in role.string.flatMap(User.Role.init).map { User(name: name, role: $0) } }
    }
}
