import Crypto
import Foundation
package import RichPushCore
import Synchronization

/// API keys in memory, with the Redis store's rules: a key is made only for an existing user,
/// only a SHA-256 digest of its token is kept, and a key acts as its user's current record (a
/// removed user's keys stop working). A revoked key is announced on `changes`, as the Redis
/// store publishes it.
package final class InMemoryAPIKeyStore: APIKeyStore {
    private let users: InMemoryUserStore
    private let app: AppID
    private let changes: InMemoryCredentialChanges?
    private let keys = Mutex<[String: (key: APIKey, digest: String)]>([:])

    /// `users`: whose keys these are; `app`: the app whose tokens these are (others are refused).
    package init(users: InMemoryUserStore, app: AppID = .default, changes: InMemoryCredentialChanges? = nil) {
        self.users = users
        self.app = app
        self.changes = changes
    }

    package func create(user: String, scopes: Set<APIKey.Scope>, label: String) async throws -> (key: APIKey, token: String)? {
        guard try await users.user(named: user) != nil else { return nil }
        var random = SystemRandomNumberGenerator()
        let id = Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) })
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let token = APIKey.token(app: app, id: id, secret: secret)
        let key = APIKey(
            id: id, user: user, scopes: scopes, label: label, createdAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        keys.withLock { $0[id] = (key, Self.digest(token)) }
        return (key, token)
    }

    package func list(user: String?) async throws -> [APIKey] {
        keys.withLock { $0.values.map(\.key) }.filter { user == nil || $0.user == user }.sorted {
            ($0.user, $0.createdAt) < ($1.user, $1.createdAt)
        }
    }

    package func revoke(id: String) async throws -> Bool {
        guard keys.withLock({ $0.removeValue(forKey: id) != nil }) else { return false }
        changes?.announce("key:\(id)")
        return true
    }

    package func verify(token: String) async throws -> (key: APIKey, user: User)? {
        guard let (app, id) = APIKey.parse(token: token), app == self.app, let stored = keys.withLock({ $0[id] }),
            ConstantTime.equal(Array(stored.digest.utf8), Array(Self.digest(token).utf8)),
            let user = try await users.user(named: stored.key.user)
        else { return nil }
        return (stored.key, user.user)
    }

    private static func digest(_ token: String) -> String { Hex.encode(SHA256.hash(data: Data(token.utf8))) }
}
