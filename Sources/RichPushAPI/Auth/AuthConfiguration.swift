/// How callers prove who they are.
public struct AuthConfiguration: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// HTTP Basic against users in Redis with bcrypt hashes (`richpush users add`).
        case bcrypt
        /// The tutorial's check, user name equals password. Not authentication: demos only.
        case demo
    }

    public var mode: Mode
    /// Failed logins counted per user and per address within this window.
    public var failureWindow: Duration
    /// Failures of one user name within the window before it is refused with 429.
    public var maxFailuresPerUser: Int
    /// Failures from one address within the window before it is refused with 429.
    public var maxFailuresPerAddress: Int
    /// How long a verified password is remembered, so bcrypt runs once per user per period.
    public var cacheTTL: Duration

    public init(mode: Mode = .bcrypt, failureWindow: Duration = .seconds(900), maxFailuresPerUser: Int = 10,
                maxFailuresPerAddress: Int = 50, cacheTTL: Duration = .seconds(30)) {
        self.mode = mode
        self.failureWindow = failureWindow
        self.maxFailuresPerUser = maxFailuresPerUser
        self.maxFailuresPerAddress = maxFailuresPerAddress
        self.cacheTTL = cacheTTL
    }
}
