/// Checks a webhook's URL before it is stored: `http` or `https`, a host, no credentials, bounded.
///
/// Without `allowPrivate` (the API's `--webhook-allow-private`), a host written as a loopback,
/// private, link-local or unspecified address, or `localhost`, is refused: a user must not make
/// the workers POST to the machines around them. Link-local (cloud metadata) is refused always.
/// A name that resolves to such an address is not caught here (see docs/webhooks.md).
package enum WebhookURL {
    package static let maxBytes = 2048

    /// Nil when `url` is acceptable, else what is wrong with it.
    package static func problem(with url: String, allowPrivate: Bool) -> String? {
        guard !url.isEmpty, url.utf8.count <= maxBytes else { return "'url' must be 1 to \(maxBytes) bytes" }
        guard url.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            return "'url' must be printable ASCII without spaces (percent-encode the rest)"
        }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = url.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = url.dropFirst(7)
        } else {
            return "'url' must start with https:// or http://"
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { return "'url' must not carry credentials (use the signature to authenticate RichPush)" }
        let host = Self.host(of: authority).lowercased()
        guard !host.isEmpty else { return "'url' has no host" }
        if Self.isLinkLocal(host) { return "'url' names a link-local address (\(host)): refused" }
        if !allowPrivate, Self.isPrivate(host) {
            return
                "'url' names a loopback or private address (\(host)); the server refuses those unless started with --webhook-allow-private"
        }
        return nil
    }

    /// The host of `host[:port]` or `[v6]:port`, without brackets or port.
    static func host(of authority: Substring) -> String {
        if authority.hasPrefix("[") {
            return String(authority.dropFirst().prefix { $0 != "]" })
        }
        return String(authority.prefix { $0 != ":" })
    }

    static func isLinkLocal(_ host: String) -> Bool {
        if let v4 = ipv4(host) { return v4.0 == 169 && v4.1 == 254 }
        return host.hasPrefix("fe8") || host.hasPrefix("fe9") || host.hasPrefix("fea") || host.hasPrefix("feb")
    }

    static func isPrivate(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if let (a, b, _, _) = ipv4(host) {
            return a == 127 || a == 10 || a == 0 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168)
                || (a == 100 && (64...127).contains(b))
        }
        guard host.contains(":") else { return false }
        // IPv6 literals: loopback, unspecified, unique local (fc00::/7), IPv4-mapped.
        return host == "::1" || host == "::" || host.hasPrefix("fc") || host.hasPrefix("fd") || host.hasPrefix("::ffff:")
    }

    static func ipv4(_ host: String) -> (Int, Int, Int, Int)? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let numbers = parts.compactMap { part -> Int? in
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), let value = Int(part), (0...255).contains(value) else {
                return nil
            }
            return value
        }
        guard numbers.count == 4 else { return nil }
        return (numbers[0], numbers[1], numbers[2], numbers[3])
    }
}
