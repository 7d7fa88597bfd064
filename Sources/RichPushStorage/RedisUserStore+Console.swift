import Hiredis
package import RichPushCore

/// A user's console role and app scope (docs/console.md), kept in the user's own hash (fields
/// `console` and `consoleApps`): removing the user removes them, and changing them announces a
/// credential change, so every API replica drops what it cached of the user.
extension RedisUserStore {
    /// The user (with their password hash) and their console access (nil: none).
    package func consoleUser(named name: String) async throws -> (user: StoredUser, access: ConsoleAccess?)? {
        let fields = try await redis.send("HMGET", keys.user(name), "hash", "role", "console", "consoleApps").array ?? []
        guard fields.count == 4, let hash = fields[0].string, let role = fields[1].string.flatMap(User.Role.init) else { return nil }
        return (
            StoredUser(user: User(name: name, role: role), passwordHash: hash),
            ConsoleAccess(stored: fields[2].string, apps: fields[3].string)
        )
    }

    /// Sets (or with nil removes) the user's console access; false if there is no such user.
    package func setConsoleAccess(name: String, _ access: ConsoleAccess?) async throws -> Bool {
        guard try await redis.send("EXISTS", keys.user(name)).int == 1 else { return false }
        let change: RedisCommand
        if let access {
            change = RedisCommand("HSET", keys.user(name), "console", access.role.rawValue, "consoleApps", access.storedApps)
        } else {
            change = RedisCommand("HDEL", keys.user(name), "console", "consoleApps")
        }
        try await redis.sendAll([change, RedisCommand("PUBLISH", keys.credentialChanges, "user:\(keys.credentialName(name))")])
        return true
    }
}
