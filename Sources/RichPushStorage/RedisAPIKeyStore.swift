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
        let created =
            try await redis.run(
                Self.createScript,
                CreateCall(
                    user: keys.user(user), key: keys.apiKey(id), userKeys: keys.apiKeys(of: user), name: user,
                    scopes: Self.encode(scopes), digest: Self.digest(token), label: label, created: key.createdAt,
                    id: id)
            ).int == 1
        return created ? (key, token) : nil
    }

    /// A new key's keys (the user's hash, the key's hash, the user's key set) and fields.
    struct CreateCall {
        let user: String, key: String, userKeys: String
        let name: String, scopes: String, digest: String, label: String, created: Int64, id: String
    }

    /// Creates the key only if the user exists.
    static let createScript = LuaScript<CreateCall, Never>(
        [
            .key("user", \.user), .key("key", \.key), .key("userKeys", \.userKeys), .argument("name", \.name),
            .argument("scopes", \.scopes),
            .argument("digest", \.digest), .argument("label", \.label), .argument("created", \.created), .argument("id", \.id),
        ],
        body: """
            if redis.call('EXISTS', user) == 0 then return 0 end
            redis.call('HSET', key, 'user', name, 'scopes', scopes, 'digest', digest, 'label', label, 'created', created)
            redis.call('SADD', userKeys, id)
            return 1

            """)

    package func list(user: String?) async throws -> [APIKey] {
        let users: [String]
        if let user { users = [user] } else { users = (try await redis.send("SMEMBERS", keys.users).array ?? []).compactMap(\.string) }
        let idSets = try await redis.sendAll(users.map { RedisCommand("SMEMBERS", keys.apiKeys(of: $0)) })
        let ids = idSets.flatMap { $0.array?.compactMap(\.string) ?? [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HMGET", keys.apiKey($0), "user", "scopes", "label", "created") })
        return zip(ids, replies).compactMap { id, reply in
            guard let fields = reply.array, fields.count == 4, let user = fields[0].string, let scopes = fields[1].string else {
                return nil
            }
            return APIKey(
                id: id, user: user, scopes: Self.decode(scopes), label: fields[2].string ?? "", createdAt: Int64(fields[3].int ?? 0))
        }.sorted { ($0.user, $0.createdAt) < ($1.user, $1.createdAt) }
    }

    package func revoke(id: String) async throws -> Bool {
        try await redis.run(Self.revokeScript, revokeCall(id: id)).int == 1
    }

    /// Revokes every key of a user (the user is being removed), in one pipeline; returns how many.
    package func revokeAll(user: String) async throws -> Int {
        let ids = (try await redis.send("SMEMBERS", keys.apiKeys(of: user)).array ?? []).compactMap(\.string)
        var revoked = 0
        if !ids.isEmpty {
            for reply in try await redis.run(Self.revokeScript, calls: ids.map(revokeCall(id:))) {
                revoked += try reply.throwingError().int ?? 0
            }
        }
        try await redis.send("DEL", keys.apiKeys(of: user))
        return revoked
    }

    /// A revocation: the key's hash, the per-user sets' key prefix, its id, the change channel
    /// and the key's name there.
    struct RevokeCall {
        let key: String, userKeysPrefix: String, id: String, channel: String, name: String
    }

    func revokeCall(id: String) -> RevokeCall {
        RevokeCall(
            key: keys.apiKey(id), userKeysPrefix: keys.apiKeys(of: ""), id: id, channel: keys.credentialChanges,
            name: keys.credentialName(id))
    }

    /// Deletes the key and announces it; 0 if it was gone.
    static let revokeScript = LuaScript<RevokeCall, Never>(
        [
            .key("key", \.key), .argument("userKeysPrefix", \.userKeysPrefix), .argument("id", \.id), .argument("channel", \.channel),
            .argument("name", \.name),
        ],
        body: """
            local user = redis.call('HGET', key, 'user')
            if not user then return 0 end
            redis.call('DEL', key)
            redis.call('SREM', userKeysPrefix .. user, id)
            redis.call('PUBLISH', channel, 'key:' .. name)
            return 1

            """)

    package func verify(token: String) async throws -> (key: APIKey, user: User)? {
        guard let (app, id) = APIKey.parse(token: token), app == keys.app else { return nil }
        let fields = try await redis.send("HMGET", keys.apiKey(id), "user", "scopes", "digest", "label", "created").array ?? []
        guard fields.count == 5, let name = fields[0].string, let scopes = fields[1].string, let digest = fields[2].string,
            ConstantTime.equal(Array(digest.utf8), Array(Self.digest(token).utf8))
        else { return nil }
        let role = try await redis.send("HGET", keys.user(name), "role").string.flatMap(User.Role.init)
        guard let role else { return nil }
        let key = APIKey(
            id: id, user: name, scopes: Self.decode(scopes), label: fields[3].string ?? "", createdAt: Int64(fields[4].int ?? 0))
        return (key, User(name: name, role: role))
    }

    static func digest(_ token: String) -> String {
        Hex.encode(SHA256.hash(data: Data(token.utf8)))
    }

    static func encode(_ scopes: Set<APIKey.Scope>) -> String { scopes.sorted().map(\.rawValue).joined(separator: ",") }
    static func decode(_ text: String) -> Set<APIKey.Scope> {
        Set(text.split(separator: ",").compactMap { APIKey.Scope(rawValue: String($0)) })
    }

}
