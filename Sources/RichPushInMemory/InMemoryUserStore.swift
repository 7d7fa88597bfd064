package import RichPushCore
import Synchronization

/// Users with their bcrypt hashes, and the login throttle (`+Throttle`), in memory, with the
/// Redis store's rules (a name is taken once; an update or removal of a missing user says so), so
/// the API's routes can run in memory in tests. The password is checked by the API against
/// ``StoredUser/passwordHash``, as on Redis. A changed or removed user is announced on
/// `changes`, as the Redis store publishes it.
package final class InMemoryUserStore: UserStore {
    struct Failures {
        var count: Int
        var last: ContinuousClock.Instant
        /// Forgotten from then on (Redis's `PEXPIRE`, renewed by each failure).
        var expires: ContinuousClock.Instant
    }

    struct State {
        var users: [String: StoredUser] = [:]
        /// Per (user, address), and per address: failed (or reserved) logins.
        var pairs: [String: [String: Failures]] = [:]
        var addresses: [String: Failures] = [:]
    }

    let state = Mutex(State())
    private let changes: InMemoryCredentialChanges?

    package init(changes: InMemoryCredentialChanges? = nil) {
        self.changes = changes
    }

    package func user(named name: String) async throws -> StoredUser? {
        state.withLock { $0.users[name] }
    }

    package func create(_ user: User, passwordHash: String) async throws -> Bool {
        state.withLock { state in
            guard state.users[user.name] == nil else { return false }
            state.users[user.name] = StoredUser(user: user, passwordHash: passwordHash)
            return true
        }
    }

    package func update(name: String, passwordHash: String?, role: User.Role?) async throws -> Bool {
        let found = state.withLock { state in
            guard let stored = state.users[name] else { return false }
            state.users[name] = StoredUser(
                user: User(name: name, role: role ?? stored.user.role), passwordHash: passwordHash ?? stored.passwordHash)
            return true
        }
        if found, passwordHash != nil || role != nil { changes?.announce("user:\(name)") }
        return found
    }

    package func remove(name: String) async throws -> Bool {
        let removed = state.withLock { state in
            state.pairs[name] = nil
            return state.users.removeValue(forKey: name) != nil
        }
        changes?.announce("user:\(name)")
        return removed
    }

    package func list() async throws -> [User] {
        state.withLock { $0.users.values.map(\.user) }.sorted { $0.name < $1.name }
    }
}
