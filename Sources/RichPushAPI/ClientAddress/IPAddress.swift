#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as 128 bits, IPv4 in its IPv4-mapped form (`::ffff:a.b.c.d`), so one
/// comparison serves both families and a dual-stack socket's `::ffff:10.0.0.1` is `10.0.0.1`.
struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses the textual forms `inet_pton` reads (dotted quad, RFC 4291 text); nil for anything
    /// else, such as a port, brackets, a zone (`%eth0`) or a NUL.
    init?(_ text: some StringProtocol) {
        let text = String(text)
        guard (2...45).contains(text.utf8.count), !text.utf8.contains(0) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(high: 0, low: 0xFFFF_0000_0000 | UInt64(UInt32(bigEndian: v4.s_addr)))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let (high, low) = withUnsafeBytes(of: &v6) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        self.init(high: high, low: low)
    }

    /// An address as a proxy may write it in `X-Forwarded-For`: bare, `a.b.c.d:port` or `[v6]:port`.
    init?(forwarded text: Substring) {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            self.init(text[text.index(after: text.startIndex)..<close])
        } else if let colon = text.firstIndex(of: ":"), text.contains("."), !text[text.index(after: colon)...].contains(":") {
            self.init(text[..<colon])
        } else {
            self.init(text)
        }
    }

    var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// Dotted quad for IPv4, RFC 5952 text for IPv6: one spelling per address, so a throttle keyed
    /// on it cannot be dodged by writing the same address another way.
    var description: String {
        if isIPv4 {
            return [24, 16, 8, 0].map { String((low >> $0) & 0xFF) }.joined(separator: ".")
        }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { bytes in
            bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
