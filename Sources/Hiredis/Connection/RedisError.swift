/// An error from the Redis client: a server error reply, or a failure to reach or talk to Redis.
///
/// A struct with static codes (as swift-jobs' `JobQueueError` and async-http-client's
/// `HTTPClientError`), so new codes can be added without breaking anyone's `switch`.
public struct RedisError: Error, Sendable, Hashable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// Redis answered with an error reply (`WRONGTYPE ...`, `NOSCRIPT ...`); `message` is its text.
        public static let server = Code(name: "server")
        /// The TCP connection could not be made (refused, unknown host, connect timeout).
        public static let connectionFailed = Code(name: "connectionFailed")
        /// The connection is down and the client is waiting for its reconnect back-off to pass.
        public static let connectionUnavailable = Code(name: "connectionUnavailable")
        /// The connection broke while a command was in flight; it may or may not have run.
        public static let connectionLost = Code(name: "connectionLost")
        /// No reply came within the command timeout; the connection is dropped and remade.
        public static let timeout = Code(name: "timeout")
        /// AUTH was refused (wrong user name or password) or required and not given.
        public static let authenticationFailed = Code(name: "authenticationFailed")
        /// The Redis URL is malformed or asks for something this client does not support.
        public static let invalidURL = Code(name: "invalidURL")
        /// Redis answered with a reply of a shape the caller did not expect.
        public static let unexpectedReply = Code(name: "unexpectedReply")
        /// The connection, pool or subscriber was closed by its owner.
        public static let closed = Code(name: "closed")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// An error reply; `NOAUTH`/`WRONGPASS` become ``Code/authenticationFailed`` wherever they come from.
    init(server message: String) {
        let authentication = message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS")
        self.init(code: authentication ? .authenticationFailed : .server, message: message)
    }

    /// The first word of a server error reply (`WRONGTYPE`, `NOSCRIPT`, `BUSYGROUP`), else nil.
    public var serverErrorPrefix: String? {
        guard code == .server || code == .authenticationFailed, message.first?.isUppercase == true else { return nil }
        return message.split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    /// Whether the same command may succeed later: "not now" (network trouble, Redis loading,
    /// busy, read-only after a failover, out of memory, a cluster reconfiguring), not a bad
    /// command. The API answers these with 503 + `Retry-After`; workers retry them.
    public var isTransient: Bool {
        [.connectionFailed, .connectionUnavailable, .connectionLost, .timeout].contains(code)
            || Self.transientPrefixes.contains(serverErrorPrefix ?? "")
    }

    /// Server error replies that mean "not now".
    public static let transientPrefixes: Set<String> = [
        "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "OOM", "CLUSTERDOWN", "NOREPLICAS", "NOTBUSY",
    ]

    public static func unexpected(_ reply: RedisValue, expected: String) -> RedisError {
        RedisError(code: .unexpectedReply, message: "expected \(expected), got \(reply)")
    }
}

extension RedisError: CustomStringConvertible {
    public var description: String { "RedisError.\(code): \(message)" }
}
