/// A user with the bcrypt hash of their password.
package struct StoredUser: Sendable, Hashable {
    package let user: User
    package let passwordHash: String

    package init(user: User, passwordHash: String) {
        self.user = user
        self.passwordHash = passwordHash
    }
}

/// Where users and the login throttle live (Redis in production).
package protocol UserStore: Sendable {
    func user(named name: String) async throws -> StoredUser?
    /// Adds a user; false if the name is taken.
    func create(_ user: User, passwordHash: String) async throws -> Bool
    /// Changes password and/or role; false if there is no such user.
    func update(name: String, passwordHash: String?, role: User.Role?) async throws -> Bool
    /// Removes the user record and their throttle state; false if there was none.
    func remove(name: String) async throws -> Bool
    func list() async throws -> [User]
    /// Reserves one login attempt for the (user, address) pair before the password is checked,
    /// atomically, so concurrent guesses cannot all pass the throttle. Returns nil when the
    /// attempt may go on (it is counted as a failure until ``loginSucceeded(user:address:)``),
    /// or the seconds to wait.
    func reserveLoginAttempt(user: String, address: String, policy: LoginThrottle) async throws -> Int?
    /// Refunds the reserved attempt and clears the pair's failures.
    func loginSucceeded(user: String, address: String) async throws
    /// Clears the throttle of the user (every address, or one).
    func unlock(user: String, address: String?) async throws -> Int
}

/// How failed logins slow down further guesses: each (user name, address) pair and each address
/// gets a number of free failures, then must wait 1, 2, 4, … seconds (up to `maxDelay`) after
/// each further one. Nothing locks an account: the same user from another address is not slowed.
package struct LoginThrottle: Sendable, Hashable {
    /// Failures of one (user, address) pair before delays start.
    package var freeFailuresPerPair: Int
    /// Failures from one address (any user names) before delays start.
    package var freeFailuresPerAddress: Int
    /// The first delay once the free failures are used up; each failure after doubles it.
    package var firstDelay: Duration
    /// The longest delay between two attempts.
    package var maxDelay: Duration
    /// Failures are forgotten this long after the last one.
    package var memory: Duration

    package init(
        freeFailuresPerPair: Int = 5, freeFailuresPerAddress: Int = 100, firstDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(900),
        memory: Duration = .seconds(3600)
    ) {
        self.firstDelay = firstDelay
        self.freeFailuresPerPair = freeFailuresPerPair
        self.freeFailuresPerAddress = freeFailuresPerAddress
        self.maxDelay = maxDelay
        self.memory = memory
    }
}
