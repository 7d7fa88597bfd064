import Foundation
import HummingbirdBcrypt
import Synchronization

/// The bcrypt hash an unknown user name is checked against, so that it costs what a known one
/// does and timing does not tell which names exist. No password matches it.
///
/// bcrypt's time is set by the cost written in the hash, so the decoy follows the hashes actually
/// stored: it starts at `--bcrypt-cost` (the `users add` default) and then takes the cost of the
/// last stored hash verified. A fixed cost leaked names whenever the stored hashes had another
/// (cost-10 decoy vs cost-12 users: 151 vs 304 ms).
final class DecoyHash: Sendable {
    /// Salt and digest of a real hash (53 characters); any cost written before them gives a valid
    /// hash that bcrypt works through in full, and that no password matches.
    private let saltAndDigest: String
    private let cost: Atomic<Int>

    init(cost: Int) {
        let template = Bcrypt.hash(UUID().uuidString + UUID().uuidString, cost: 4)
        saltAndDigest = String(template.dropFirst(7))
        self.cost = Atomic(Self.costs.contains(cost) ? cost : 12)
    }

    /// The decoy at the current cost: `$2b$<cost>$<salt><digest>`.
    var hash: String {
        let cost = cost.load(ordering: .relaxed)
        return "$2b$" + (cost < 10 ? "0\(cost)" : "\(cost)") + "$" + saltAndDigest
    }

    var currentCost: Int { cost.load(ordering: .relaxed) }

    /// Takes the cost of a stored hash about to be verified; a hash bcrypt cannot read is ignored.
    func learn(from stored: String) {
        guard let learned = Self.cost(of: stored) else { return }
        cost.store(learned, ordering: .relaxed)
    }

    private static let costs = 4...31

    /// The cost of `$2a$`/`$2b$` hashes (the versions our bcrypt reads), nil for anything else.
    static func cost(of hash: String) -> Int? {
        let bytes = Array(hash.utf8.prefix(7))
        guard bytes.count == 7, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            bytes[2] == UInt8(ascii: "a") || bytes[2] == UInt8(ascii: "b"), bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
            let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), costs.contains(cost)
        else { return nil }
        return cost
    }
}
