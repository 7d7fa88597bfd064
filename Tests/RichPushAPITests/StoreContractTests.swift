import APITestSupport
import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushInMemory
import RichPushStorage
import Testing

/// The in-memory users, API keys, webhooks and installations keep the Redis stores' rules: each check runs on
/// both, so a route test that passes in memory means what it would on Redis.
@Suite("Stores in memory and on Redis keep the same rules")
struct StoreContractTests {
    /// The three stores of one backend, by their roles.
    struct Stores {
        let name: String
        let users: any UserStore
        let keys: any APIKeyStore
        let webhooks: any WebhookStore
        let installations: any InstallationStore
    }

    /// Runs `body` on the in-memory stores, then on fresh Redis ones.
    static func onBoth(_ body: (Stores) async throws -> Void) async throws {
        let memory = InMemoryAPI()
        try await body(
            Stores(
                name: "memory", users: memory.users, keys: memory.apiKeys, webhooks: memory.webhooks, installations: memory.installations))
        try await withRedisServer { server in
            let redis = RedisConnectionPool(configuration: server.configuration, size: 1)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("contract").dropLast()))
            do {
                try await body(
                    Stores(
                        name: "redis", users: RedisUserStore(redis: redis, keys: keys), keys: RedisAPIKeyStore(redis: redis, keys: keys),
                        webhooks: RedisWebhookStore(redis: redis, keys: keys),
                        installations: RedisInstallationStore(redis: redis, keys: keys)))
            } catch {
                await redis.close()
                throw error
            }
            await redis.close()
        }
    }

    @Test func aNameIsTakenOnceAndChangesNeedTheUser() async throws {
        try await Self.onBoth { stores in
            let users = stores.users
            #expect(try await users.create(User(name: "alice", role: .user), passwordHash: "h1"), "\(stores.name)")
            #expect(try await !users.create(User(name: "alice", role: .admin), passwordHash: "h2"), "\(stores.name)")
            #expect(
                try await users.user(named: "alice") == StoredUser(user: User(name: "alice", role: .user), passwordHash: "h1"),
                "\(stores.name)")
            #expect(try await !users.update(name: "ghost", passwordHash: "x", role: nil), "\(stores.name)")
            #expect(try await users.update(name: "alice", passwordHash: nil, role: .admin), "\(stores.name)")
            let changed = try await users.user(named: "alice")
            #expect(changed?.passwordHash == "h1" && changed?.user.role == .admin, "\(stores.name)")
            _ = try await users.create(User(name: "bob", role: .user), passwordHash: "h3")
            #expect(try await users.list().map(\.name) == ["alice", "bob"], "\(stores.name)")
            #expect(try await users.remove(name: "alice"), "\(stores.name)")
            #expect(try await !users.remove(name: "alice"), "\(stores.name)")
            #expect(try await users.user(named: "alice") == nil, "\(stores.name)")
            #expect(try await users.list().map(\.name) == ["bob"], "\(stores.name)")
        }
    }

    @Test func failedLoginsAreThrottledPerPairAndCleared() async throws {
        // A first delay of 30 s: a slow, busy machine cannot outlast it between two calls.
        let policy = LoginThrottle(freeFailuresPerPair: 2, freeFailuresPerAddress: 100, firstDelay: .seconds(30))
        try await Self.onBoth { stores in
            let users = stores.users
            // Each attempt is charged before the password is checked: two free, then a wait.
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) == nil, "\(stores.name)")
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) == nil, "\(stores.name)")
            let wait = try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy)
            #expect((1...30).contains(wait ?? 0), "\(stores.name): \(String(describing: wait))")
            // Not the same user elsewhere, nor another user here.
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.7", policy: policy) == nil, "\(stores.name)")
            #expect(try await users.reserveLoginAttempt(user: "carol", address: "192.0.2.8", policy: policy) == nil, "\(stores.name)")
            // A success clears its pair.
            try await users.loginSucceeded(user: "carol", address: "192.0.2.8")
            #expect(try await users.unlock(user: "carol", address: "192.0.2.8") == 0, "\(stores.name)")
            // `richpush users unlock bob`: both of his pairs.
            #expect(try await users.unlock(user: "bob", address: nil) == 2, "\(stores.name)")
            #expect(try await users.reserveLoginAttempt(user: "bob", address: "192.0.2.8", policy: policy) == nil, "\(stores.name)")
        }
    }

    @Test func aKeyActsAsItsUsersCurrentRecordUntilRevoked() async throws {
        try await Self.onBoth { stores in
            #expect(try await stores.keys.create(user: "ghost", scopes: [.send], label: "") == nil, "\(stores.name)")
            _ = try await stores.users.create(User(name: "alice", role: .user), passwordHash: "h")
            let (key, token) = try #require(
                try await stores.keys.create(user: "alice", scopes: [.send, .read], label: "backend"), "\(stores.name)")
            #expect(APIKey.parse(token: token)?.id == key.id, "\(stores.name)")
            let verified = try await stores.keys.verify(token: token)
            #expect(verified?.key == key && verified?.user == User(name: "alice", role: .user), "\(stores.name)")
            // Another secret for the same id is no key.
            let forged = APIKey.token(app: .default, id: key.id, secret: String(repeating: "A", count: 43))
            #expect(try await stores.keys.verify(token: forged) == nil, "\(stores.name)")
            #expect(try await stores.keys.list(user: "alice").map(\.id) == [key.id], "\(stores.name)")
            #expect(try await stores.keys.list(user: "bob").isEmpty, "\(stores.name)")
            // The user's role is read at each check.
            _ = try await stores.users.update(name: "alice", passwordHash: nil, role: .admin)
            #expect(try await stores.keys.verify(token: token)?.user.role == .admin, "\(stores.name)")
            #expect(try await stores.keys.revoke(id: key.id), "\(stores.name)")
            #expect(try await !stores.keys.revoke(id: key.id), "\(stores.name)")
            #expect(try await stores.keys.verify(token: token) == nil, "\(stores.name)")
            // A removed user's keys stop working.
            let (_, second) = try #require(try await stores.keys.create(user: "alice", scopes: [.send], label: ""), "\(stores.name)")
            _ = try await stores.users.remove(name: "alice")
            #expect(try await stores.keys.verify(token: second) == nil, "\(stores.name)")
        }
    }

    /// A platform's "this token is dead" removes the registration only while it still has that
    /// handle: a device that registered a new one meanwhile (a browser after
    /// `pushsubscriptionchange`, under the same installation id) keeps it.
    @Test func aDeadHandleRemovesItsRegistrationButNotTheNewHandleThatReplacedIt() async throws {
        try await Self.onBoth { stores in
            let installations = stores.installations
            let old = Installation(
                id: "web1", platform: .webpush, handle: "https://push.example/old", tags: ["news"], owner: "alice", updatedAt: 1_000)
            _ = try await installations.save(old, limits: RegistrationLimits())
            let renewed = Installation(
                id: "web1", platform: .webpush, handle: "https://push.example/new", tags: ["news"], owner: "alice", updatedAt: 2_000)
            _ = try await installations.save(renewed, limits: RegistrationLimits())
            // The 410 for the old endpoint arrives after the new one was registered.
            #expect(try await !installations.remove(old), "\(stores.name)")
            #expect(try await installations.installation(id: "web1")?.handle == renewed.handle, "\(stores.name)")
            #expect(try await installations.installationIDs(tag: "news", cursor: 0, count: 10).ids == ["web1"], "\(stores.name)")
            // The 410 for the registered endpoint removes it, once.
            #expect(try await installations.remove(renewed), "\(stores.name)")
            #expect(try await installations.installation(id: "web1") == nil, "\(stores.name)")
            #expect(try await installations.installationIDs(tag: "news", cursor: 0, count: 10).ids.isEmpty, "\(stores.name)")
            #expect(try await !installations.remove(renewed), "\(stores.name)")
        }
    }

    @Test func webhooksAreBoundedPerOwnerAndGoneOnce() async throws {
        try await Self.onBoth { (stores: Stores) async throws in
            for index in 0..<Webhook.maxPerUser {
                #expect(try await stores.webhooks.create(Self.hook(index, owner: "alice")), "\(stores.name) \(index)")
            }
            #expect(try await !stores.webhooks.create(Self.hook(99, owner: "alice")), "\(stores.name)")
            #expect(try await stores.webhooks.create(Self.hook(100, owner: "bob")), "\(stores.name)")
            #expect(
                try await stores.webhooks.webhook(id: Self.hook(3, owner: "alice").id) == Self.hook(3, owner: "alice"), "\(stores.name)")
            #expect(try await stores.webhooks.webhook(id: "not-an-id") == nil, "\(stores.name)")
            #expect(try await stores.webhooks.webhooks(owner: "bob").map(\.id) == [Self.hook(100, owner: "bob").id], "\(stores.name)")
            #expect(try await stores.webhooks.webhooks(owner: nil).count == Webhook.maxPerUser + 1, "\(stores.name)")
            #expect(try await stores.webhooks.delete(id: Self.hook(3, owner: "alice").id), "\(stores.name)")
            #expect(try await !stores.webhooks.delete(id: Self.hook(3, owner: "alice").id), "\(stores.name)")
            // A freed place can be taken again.
            #expect(try await stores.webhooks.create(Self.hook(99, owner: "alice")), "\(stores.name)")
        }
    }

    static func hook(_ index: Int, owner: String) -> Webhook {
        Webhook(
            id: "wh_" + String(format: "%016llx", index), owner: owner, url: "https://hooks.example.com/\(index)", events: [.sent],
            allUsers: false, description: "", secret: "s", createdAt: Int64(index))
    }
}
