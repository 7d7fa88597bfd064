import Foundation

/// Where and how to connect to Redis: parsed from a `redis://` URL, with timeouts and back-off.
package struct RedisConfiguration: Sendable, Hashable {
    package var host: String
    package var port: Int
    /// ACL user name (Redis 6+); nil sends the one-argument `AUTH password`.
    package var username: String?
    package var password: String?
    package var database: Int
    /// Bounds the TCP connect and the AUTH/SELECT handshake.
    package var connectTimeout: Duration
    /// Bounds each reply; nil waits forever. Must exceed the `BLOCK` time of blocking commands.
    package var commandTimeout: Duration?
    package var tcpKeepAlive: Bool
    /// Sent as `CLIENT SETNAME`, so `CLIENT LIST` shows which process holds a connection.
    package var clientName: String?
    /// First and largest wait between reconnect attempts after a connection breaks.
    package var reconnectBackoff: ClosedRange<Duration>
    /// How long a connection's thread spins for more work before it sleeps. Spinning saves a
    /// wake-up per round trip for one caller sending back to back, but burns a core that a busy
    /// server needs; 0 (the default) never spins.
    package var idleSpin: Duration = .zero

    package static let defaultURL = "redis://127.0.0.1:6379/0"

    package init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeout: Duration = .seconds(2),
        commandTimeout: Duration? = .seconds(5),
        tcpKeepAlive: Bool = true,
        clientName: String? = nil,
        reconnectBackoff: ClosedRange<Duration> = .milliseconds(20)...(.seconds(2))
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.tcpKeepAlive = tcpKeepAlive
        self.clientName = clientName
        self.reconnectBackoff = reconnectBackoff
    }

    /// Parses `redis://[user[:password]@]host[:port][/db]`; user and password may be percent-encoded.
    package init(url: String) throws(RedisError) {
        self.init()
        let fail = { (why: String) in RedisError(code: .invalidURL, message: "invalid Redis URL '\(Self.redact(url))': \(why)") }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw fail("expected redis://[user:password@]host[:port][/db]")
        }
        switch scheme {
        case "redis": break
        case "rediss": throw fail("TLS (rediss://) is not supported by hiredis 0.14; reach Redis over a TLS proxy such as stunnel")
        default: throw fail("unsupported scheme '\(scheme)', expected redis://")
        }
        guard let host = components.host, !host.isEmpty else { throw fail("missing host") }
        self.host = host
        if let port = components.port {
            guard (1...65535).contains(port) else { throw fail("port \(port) is out of range") }
            self.port = port
        }
        let user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        if let password {
            self.username = (user?.isEmpty ?? true) ? nil : user
            self.password = password
        } else if let user, !user.isEmpty {
            // `redis://secret@host` is the common short form of a password-only URL.
            self.password = user
        }
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let database = Int(path), database >= 0 else { throw fail("database '\(path)' is not a non-negative integer") }
            self.database = database
        }
        if let items = components.queryItems, let unknown = items.first(where: { $0.name != "name" }) {
            throw fail("unknown option '\(unknown.name)' (supported: name)")
        }
        clientName = components.queryItems?.first(where: { $0.name == "name" })?.value
    }

    /// The URL without its credentials, safe for logs.
    package var redactedURL: String {
        let credentials = (username != nil || password != nil) ? "***@" : ""
        return "redis://\(credentials)\(host):\(port)/\(database)"
    }

    static func redact(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let schemeEnd = url.range(of: "://") else { return url }
        return url[..<schemeEnd.upperBound] + "***" + url[at...]
    }
}
