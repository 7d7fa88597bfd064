/// The proxies (load balancers) whose `X-Forwarded-For` names the client: `--trusted-proxies`.
///
/// Only a request whose peer is in one of these ranges has its client taken from the header,
/// and then as the standard rule says: the right-most address that is not itself a trusted
/// proxy. Each proxy appends the address it saw, so the addresses left of the first untrusted
/// hop were written by the client and are not believed. With no ranges, or from any other peer,
/// the peer is the client and the header is ignored.
package struct TrustedProxies: Sendable, Hashable {
    package var ranges: [CIDR]

    package init(_ ranges: [CIDR] = []) {
        self.ranges = ranges
    }

    /// Parses a comma-separated list (`10.0.0.0/8, fd00::/8, 192.0.2.7`); an empty list trusts
    /// no proxy.
    package init(parsing list: String) throws(ParseError) {
        var ranges: [CIDR] = []
        for entry in list.split(separator: ",") {
            let entry = entry.trimmingOptionalWhitespace
            if entry.isEmpty { continue }
            guard let range = CIDR(String(entry)) else { throw ParseError(entry: String(entry.prefix(100))) }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    /// An entry of `--trusted-proxies` that is not an address or a CIDR.
    package struct ParseError: Error, CustomStringConvertible {
        package let entry: String
        package var description: String {
            "'\(entry)' is not an IPv4 or IPv6 address or CIDR range (such as 10.0.0.0/8, 192.0.2.7 or fd00::/8)"
        }
    }

    package var isEmpty: Bool { ranges.isEmpty }

    func trusts(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// Hops of `X-Forwarded-For` looked at, right to left; a longer chain is cut there.
    static let maxHops = 32

    /// The client of a request from `peer` (as the socket gives it) carrying these
    /// `X-Forwarded-For` field values (in order).
    func client(peer: String, forwardedFor values: [String]) -> String {
        guard let peerAddress = IPAddress(peer), trusts(peerAddress) else { return peer }
        var client = peerAddress
        let hops = values.flatMap { $0.split(separator: ",") }.suffix(Self.maxHops)
        for hop in hops.reversed() {
            // What a trusted proxy wrote is not an address: stop at the last address known.
            guard let address = IPAddress(forwarded: hop.trimmingOptionalWhitespace) else { break }
            client = address
            if !trusts(address) { break }
        }
        return client.description
    }
}
