/// The push service the device page may reach, from the page's `push` query parameter: an
/// origin and nothing else (RFC 6454: scheme, host, port), rebuilt from its parts so that what
/// goes into the page's Content-Security-Policy is exactly an origin. A link can name any push
/// service, but the page sends it no credential (only the subscribe request and the WebSocket),
/// and the API's own origin is the only one that ever sees the user's password.
struct PushServiceOrigin: Equatable {
    /// `https`, or `http` for a loopback host (a cleartext push service on this machine).
    let scheme: String
    /// Lower case: a DNS name, a dotted IPv4 address, or a bracketed IPv6 address.
    let host: String
    let port: Int?

    /// Refuses anything but `scheme://host[:port]` with an optional trailing `/`: no user, path,
    /// query or fragment, no character a policy would read as a separator.
    init?(_ text: String) {
        guard text.utf8.count <= 300, let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        var rest = Substring(text[separator.upperBound...])
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard host.count > 2, host.dropFirst().dropLast().allSatisfy({ ($0.isASCII && $0.isHexDigit) || $0 == ":" || $0 == "." }) else {
                return nil
            }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            if parts.count == 2 { portText = parts[1] }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard !host.isEmpty, host.count <= 253,
                labels.allSatisfy({ label in
                    (1...63).contains(label.count) && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                        && label.first != "-" && label.last != "-"
                })
            else { return nil }
        }
        var port: Int?
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(portText),
                (1...65535).contains(value)
            else { return nil }
            port = value
        }
        let lowered = host.lowercased()
        guard scheme == "https" || Self.isLoopback(lowered) else { return nil }
        self.scheme = scheme
        self.host = lowered
        self.port = port
    }

    /// `scheme://host[:port]`, as a policy's source expression.
    var origin: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") }

    /// The same host and port for its WebSockets: `wss` (or `ws` beside `http`).
    var webSocketOrigin: String { "\(scheme == "https" ? "wss" : "ws")://\(host)" + (port.map { ":\($0)" } ?? "") }

    private static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
