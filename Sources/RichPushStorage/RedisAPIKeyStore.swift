import Crypto
import Foundation
package import Hiredis
package import RichPushCore
import RichPushQueue

/// API keys as Redis hashes (`apikey:<id>`: user, scopes, SHA-256 of the token, label, created),
/// with a set of ids per user. The token itself is never stored.
package struct RedisAPIKeyStore: APIKeyStore {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func create(user: String, scopes: Set<APIKey.Scope>, label: String) async throws -> (key: APIKey, token: String)? {
        var random = SystemRandomNumberGenerator()
        let id = Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) })
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let token = APIKey.token(app: keys.app, id: id, secret: secret)
        let key = APIKey(id: id, user: user, scopes: scopes, label: label, createdAt: JobQueue.nowMilliseconds())
        let created = try await redis.run(Self.createScript, keys: [keys.user(user), keys.apiKey(id), keys.apiKeys(of: user)],
                                          arguments: [user, Self.encode(scopes), Self.digest(token), label, key.createdAt, id]).int == 1
        return created ? (key, token) : nil
    }

    /// KEYS: user, key, user's key set. Creates the key only if the user exists.
    static let createScript = RedisScript("""
    if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
    redis.call('HSET', KEYS[2], 'user', ARGV[1], 'scopes', ARGV[2], 'digest', ARGV[3], 'label', ARGV[4], 'created', ARGV[5])
    redis.call('SADD', KEYS[3], ARGV[6])
    return 1
    """)

    package func list(user: String?) async throws -> [APIKey] {
        let users: [String]
        if let user { users = [user] } else { users = (try await redis.send("SMEMBERS", keys.users).array ?? []).compactMap(\.string) }
        let idSets = try await redis.sendAll(users.map { RedisCommand("SMEMBERS", keys.apiKeys(of: $0)) })
        let ids = idSets.flatMap { $0.array?.compactMap(\.string) ?? [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HMGET", keys.apiKey($0), "user", "scopes", "label", "created") })
        return zip(ids, replies).compactMap { id, reply in
            guard let fields = reply.array, fields.count == 4, let user = fields[0].string, let scopes = fields[1].string else { return nil }
            return APIKey(id: id, user: user, scopes: Self.decode(scopes), label: fields[2].string ?? "", createdAt: Int64(fields[3].int ?? 0))
        }.sorted { ($0.user, $0.createdAt) < ($1.user, $1.createdAt) }
    }

    package func revoke(id: String) async throws -> Bool {
        try await redis.run(Self.revokeScript, keys: [keys.apiKey(id)],
                            arguments: [keys.apiKeys(of: ""), id, keys.credentialChanges, keys.credentialName(id)]).int == 1
    }

    /// Revokes every key of a user (the user is being removed), in one pipeline; returns how many.
    package func revokeAll(user: String) async throws -> Int {
        let ids = (try await redis.send("SMEMBERS", keys.apiKeys(of: user)).array ?? []).compactMap(\.string)
        var revoked = 0
        if !ids.isEmpty {
            let calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])] = ids.map { id in
                ([keys.apiKey(id)], [keys.apiKeys(of: ""), id, keys.credentialChanges, keys.credentialName(id)])
            }
            for reply in try await redis.run(Self.revokeScript, calls: calls) { revoked += try reply.throwingError().int ?? 0 }
        }
        try await redis.send("DEL", keys.apiKeys(of: user))
        return revoked
    }

    /// KEYS: key. ARGV: the per-user set's key prefix, id, change channel, the key's name there.
    static let revokeScript = RedisScript("""
    local user = redis.call('HGET', KEYS[1], 'user')
    if not user then return 0 end
    redis.call('DEL', KEYS[1])
    redis.call('SREM', ARGV[1] .. user, ARGV[2])
    redis.call('PUBLISH', ARGV[3], 'key:' .. ARGV[4])
    return 1
    """)

    package func verify(token: String) async throws -> (key: APIKey, user: User)? {
        guard let (app, id) = APIKey.parse(token: token), app == keys.app else { return nil }
        let fields = try await redis.send("HMGET", keys.apiKey(id), "user", "scopes", "digest", "label", "created").array ?? []
        guard fields.count == 5, let name = fields[0].string, let scopes = fields[1].string, let digest = fields[2].string,
              ConstantTime.equal(Array(digest.utf8), Array(Self.digest(token).utf8)) else { return nil }
        let role = try await redis.send("HGET", keys.user(name), "role").string.flatMap(User.Role.init)
        guard let role else { return nil }
        let key = APIKey(id: id, user: name, scopes: Self.decode(scopes), label: fields[3].string ?? "", createdAt: Int64(fields[4].int ?? 0))
        return (key, User(name: name, role: role))
    }

    static func digest(_ token: String) -> String {
        Hex.encode(SHA256.hash(data: Data(token.utf8)))
    }

    static func encode(_ scopes: Set<APIKey.Scope>) -> String { scopes.sorted().map(\.rawValue).joined(separator: ",") }
    static func decode(_ text: String) -> Set<APIKey.Scope> { Set(text.split(separator: ",").compactMap { APIKey.Scope(rawValue: String($0)) }) }

}
