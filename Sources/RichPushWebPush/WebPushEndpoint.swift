import Foundation

/// A push resource URL taken apart by hand, strictly: `https://host[:port]/path[?query]`, no user
/// info, no fragment, a host of DNS letters, digits, '-' and '.', an IPv4 address or a bracketed
/// IPv6 address. Parsing it ourselves keeps the origin (the VAPID `aud`) independent of how
/// Foundation's URL types treat edge cases on each platform, and keeps it safe to put in a JWT.
struct WebPushEndpoint: Sendable, Hashable {
    /// `https` or `http`, lowercased.
    let scheme: String
    /// Lowercased; an IPv6 address keeps its brackets.
    let host: String
    /// As written, or nil when absent.
    let port: Int?

    /// RFC 6454 serialization: the port only when it is not the scheme's default.
    var origin: String {
        let defaultPort = scheme == "https" ? 443 : 80
        guard let port, port != defaultPort else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }

    init(_ text: String, allowInsecureLoopback: Bool) throws(WebPushError) {
        func invalid(_ message: String) -> WebPushError { WebPushSubscription.invalid("endpoint", message) }
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw invalid("missing: the subscription's push URL") }
        guard bytes.count <= WebPushSubscription.maxEndpointBytes else {
            throw invalid("longer than \(WebPushSubscription.maxEndpointBytes) bytes (\(bytes.count))")
        }
        guard bytes.allSatisfy(Self.isURLCharacter) else {
            throw invalid("has a character a URL cannot hold (spaces, controls, non-ASCII, or one of \" < > \\ ^ ` { | })")
        }
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") {
            scheme = "https"
        } else if lowered.hasPrefix("http://") {
            scheme = "http"
        } else {
            throw invalid("must be an https:// URL")
        }
        let rest = bytes.dropFirst(scheme.utf8.count + 3)
        guard !rest.contains(UInt8(ascii: "#")) else { throw invalid("must not have a fragment ('#')") }
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        guard !authority.contains(UInt8(ascii: "@")) else { throw invalid("must not carry a user name or password") }
        let (host, port) = try Self.hostAndPort(authority)
        if scheme == "http" {
            guard allowInsecureLoopback, Self.isLoopback(host) else {
                throw invalid(
                    allowInsecureLoopback
                        ? "http:// is allowed only for a loopback host (localhost, 127.0.0.0/8, [::1])"
                        : "must be an https:// URL")
            }
        }
        // What AsyncHTTPClient will parse; the checks above leave little it could refuse.
        guard URL(string: text) != nil else { throw invalid("not a URL") }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    private static func hostAndPort(_ authority: ArraySlice<UInt8>) throws(WebPushError) -> (String, Int?) {
        func invalid(_ message: String) -> WebPushError { WebPushSubscription.invalid("endpoint", message) }
        var hostBytes = authority
        var portBytes: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw invalid("an IPv6 host needs its closing ']'") }
            hostBytes = authority[authority.startIndex...close]
            let inside = authority[(authority.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                throw invalid("not an IPv6 address in brackets")
            }
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { throw invalid("unexpected text after the IPv6 host") }
                portBytes = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = authority[..<colon]
            portBytes = authority[(colon + 1)...]
            guard isDNSName(hostBytes) else { throw invalid("the host must be a DNS name or an IP address") }
        } else {
            guard isDNSName(hostBytes) else { throw invalid("the host must be a DNS name or an IP address") }
        }
        var port: Int?
        if let portBytes {
            guard (1...5).contains(portBytes.count), portBytes.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(value)
            else {
                throw invalid("the port must be 1 to 65535")
            }
            port = value
        }
        return (String(decoding: hostBytes, as: UTF8.self).lowercased(), port)
    }

    /// Dot-separated labels of letters, digits and '-' (an IPv4 address is one), at most 253 bytes.
    private static func isDNSName(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard (1...253).contains(bytes.count) else { return false }
        return bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy {
                    (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
                }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// `localhost`, 127.0.0.0/8 or `[::1]`: where plain http cannot leave the machine.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "[::1]" || host == "[0:0:0:0:0:0:0:1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.first == "127" else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.utf8.count) && part.utf8.allSatisfy { (0x30...0x39).contains($0) } && Int(part)! <= 255
        }
    }

    /// RFC 3986's unreserved, reserved and '%' characters: printable ASCII less space and
    /// `" < > \ ^ ` { | }`.
    private static func isURLCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D: false
        default: (0x21...0x7E).contains(byte)
        }
    }
}
