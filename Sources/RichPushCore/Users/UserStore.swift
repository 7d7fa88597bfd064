/// A user with the bcrypt hash of their password.
public struct StoredUser: Sendable, Hashable {
    public let user: User
    public let passwordHash: String

    public init(user: User, passwordHash: String) {
        self.user = user
        self.passwordHash = passwordHash
    }
}

/// Where users and authentication failures are kept (Redis in production).
public protocol UserStore: Sendable {
    func user(named name: String) async throws -> StoredUser?
    /// Adds a user; false if the name is taken.
    func create(_ user: User, passwordHash: String) async throws -> Bool
    /// Changes password and/or role; false if there is no such user.
    func update(name: String, passwordHash: String?, role: User.Role?) async throws -> Bool
    func remove(name: String) async throws -> Bool
    func list() async throws -> [User]
    /// Counts a failed login for the user and for the address within `window`; returns both counts.
    func recordFailure(user: String, address: String, window: Duration) async throws -> (user: Int, address: Int)
    func failures(user: String, address: String) async throws -> (user: Int, address: Int)
    func clearFailures(user: String) async throws
}
