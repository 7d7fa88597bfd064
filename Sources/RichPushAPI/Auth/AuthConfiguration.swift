package import RichPushCore

/// How callers prove who they are, and how guessing is slowed.
package struct AuthConfiguration: Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        /// HTTP Basic against users in Redis with bcrypt hashes (`richpush users`), and API keys.
        case bcrypt
        /// The tutorial's check, user name equals password. Not authentication: demos only.
        case demo
    }

    package var mode: Mode
    /// Free failures and growing delays per (user, address) pair and per address.
    package var throttle: LoginThrottle
    /// How long a verified credential is trusted before it is revalidated against Redis (a read,
    /// not a bcrypt check). Changes announced by `richpush users`/`keys` apply at once.
    package var cacheTTL: Duration
    /// The bcrypt cost of the users' hashes (`richpush users add --cost`): unknown user names are
    /// checked against a decoy of this cost until a stored hash is verified, and from then on of
    /// that hash's cost, so they take as long as known ones.
    package var bcryptCost: Int
    /// bcrypt checks run at once (NIO's thread pool).
    package var bcryptConcurrency: Int
    /// bcrypt checks that may wait for a turn; more get 503 with Retry-After.
    package var bcryptQueueLimit: Int

    package init(
        mode: Mode = .bcrypt, throttle: LoginThrottle = LoginThrottle(), cacheTTL: Duration = .seconds(30),
        bcryptCost: Int = 12, bcryptConcurrency: Int = 2, bcryptQueueLimit: Int = 64
    ) {
        self.mode = mode
        self.throttle = throttle
        self.cacheTTL = cacheTTL
        self.bcryptCost = bcryptCost
        self.bcryptConcurrency = bcryptConcurrency
        self.bcryptQueueLimit = bcryptQueueLimit
    }
}
