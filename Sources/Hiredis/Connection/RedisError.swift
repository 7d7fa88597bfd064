/// An error from the Redis client: a server error reply, or a failure to reach or talk to Redis.
///
/// A struct with static codes (as swift-jobs' `JobQueueError` and async-http-client's
/// `HTTPClientError`), so new codes can be added without breaking anyone's `switch`.
package struct RedisError: Error, Sendable, Hashable {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        package var description: String { name }

        /// Redis answered with an error reply (`WRONGTYPE ...`, `NOSCRIPT ...`); `message` is its text.
        package static let server = Code(name: "server")
        /// The TCP connection could not be made (refused, unknown host, connect timeout).
        package static let connectionFailed = Code(name: "connectionFailed")
        /// The connection is down and the client is waiting for its reconnect back-off to pass.
        package static let connectionUnavailable = Code(name: "connectionUnavailable")
        /// The connection broke while a command was in flight; it may or may not have run.
        package static let connectionLost = Code(name: "connectionLost")
        /// No reply came within the command timeout; the connection is dropped and remade.
        package static let timeout = Code(name: "timeout")
        /// AUTH was refused (wrong user name or password) or required and not given.
        package static let authenticationFailed = Code(name: "authenticationFailed")
        /// The Redis URL is malformed or asks for something this client does not support.
        package static let invalidURL = Code(name: "invalidURL")
        /// Redis answered with a reply of a shape the caller did not expect.
        package static let unexpectedReply = Code(name: "unexpectedReply")
        /// The connection, pool or subscriber was closed by its owner.
        package static let closed = Code(name: "closed")
    }

    package let code: Code
    package let message: String

    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// An error reply; `NOAUTH`/`WRONGPASS` become ``Code/authenticationFailed`` wherever they come from.
    init(server message: String) {
        let authentication = message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS")
        self.init(code: authentication ? .authenticationFailed : .server, message: message)
    }

    /// The first word of a server error reply (`WRONGTYPE`, `NOSCRIPT`, `BUSYGROUP`), else nil.
    package var serverErrorPrefix: String? {
        guard code == .server || code == .authenticationFailed, message.first?.isUppercase == true else { return nil }
        return message.split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    /// Whether the same command may succeed later: "not now" (network trouble, Redis loading,
    /// busy, read-only after a failover, out of memory, a cluster reconfiguring), not a bad
    /// command. The API answers these with 503 + `Retry-After`; workers retry them.
    package var isTransient: Bool {
        [.connectionFailed, .connectionUnavailable, .connectionLost, .timeout].contains(code)
            || Self.transientPrefixes.contains(serverErrorPrefix ?? "")
    }

    /// Server error replies that mean "not now".
    package static let transientPrefixes: Set<String> = [
        "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "OOM", "CLUSTERDOWN", "NOREPLICAS", "NOTBUSY",
    ]

    package static func unexpected(_ reply: RedisValue, expected: String) -> RedisError {
        RedisError(code: .unexpectedReply, message: "expected \(expected), got \(reply)")
    }
}

extension RedisError: CustomStringConvertible {
    package var description: String { "RedisError.\(code): \(message)" }
}
