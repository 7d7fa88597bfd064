/// A range of IPv4 or IPv6 addresses written `address/prefix` (`10.0.0.0/8`, `fd00::/8`); a bare
/// address is the range of that one address. Host bits below the prefix are ignored. IPv4 ranges
/// also hold the IPv4-mapped IPv6 addresses of a dual-stack socket (`::ffff:10.0.0.1`).
package struct CIDR: Sendable, Hashable, CustomStringConvertible {
    let network: IPAddress
    /// Leading bits that must match, counted over the 128 bits (an IPv4 /8 is 104 here).
    let bits: Int

    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(parts[0]) else { return nil }
        // As written: `::ffff:203.0.113.0/120` counts its prefix over 128 bits.
        let width = parts[0].contains(":") ? 128 : 32
        var prefix = width
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let value = Int(parts[1]), value <= width
            else { return nil }
            prefix = value
        }
        bits = 128 - width + prefix
        let (high, low) = Self.mask(bits)
        network = IPAddress(high: address.high & high, low: address.low & low)
    }

    func contains(_ address: IPAddress) -> Bool {
        let (high, low) = Self.mask(bits)
        return address.high & high == network.high && address.low & low == network.low
    }

    package var description: String {
        network.isIPv4 ? "\(network)/\(bits - 96)" : "\(network)/\(bits)"
    }

    /// The first `bits` of 128 set, as two words.
    private static func mask(_ bits: Int) -> (UInt64, UInt64) {
        let high: UInt64 = bits >= 64 ? .max : bits <= 0 ? 0 : .max << UInt64(64 - bits)
        let low: UInt64 = bits >= 128 ? .max : bits <= 64 ? 0 : .max << UInt64(128 - bits)
        return (high, low)
    }
}
