/// What the hub estimates of one installation for the `auto` delivery: its background budget
/// (a token bucket, as Apple's is described) and the last silent push it was sent, with whether
/// the device fetched it. Kept by the workers per installation (``DeliveryLedger``).
package struct DeviceEstimate: Sendable, Hashable {
    /// Silent pushes left in the budget at ``refilledAt``.
    package var tokens: Double
    /// When the bucket was last brought up to date, ms since 1970.
    package var refilledAt: Int64
    /// The last silent push sent to the device (a notification id), and when (ms since 1970).
    package var lastSilent: Int?
    package var lastSilentAt: Int64
    /// Whether the device fetched ``lastSilent`` (read with the estimate, never stored).
    package var answered: Bool

    package init(tokens: Double, refilledAt: Int64, lastSilent: Int? = nil, lastSilentAt: Int64 = 0, answered: Bool = false) {
        self.tokens = tokens
        self.refilledAt = refilledAt
        self.lastSilent = lastSilent
        self.lastSilentAt = lastSilentAt
        self.answered = answered
    }

    /// How long an estimate is kept after its last write: a device silent for longer starts
    /// afresh (its budget full, its answers unknown).
    package static let lifetime: Duration = .seconds(7 * 86400)

    /// The stored form: `<tokens> <refilledAt> <lastSilent or -> <lastSilentAt>`.
    package var packed: String {
        "\(tokens) \(refilledAt) \(lastSilent.map(String.init) ?? "-") \(lastSilentAt)"
    }

    /// The estimate a stored value holds; nil for anything else.
    package init?(packed: String) {
        let parts = packed.split(separator: " ")
        guard parts.count == 4, let tokens = Double(parts[0]), tokens.isFinite, let refilledAt = Int64(parts[1]),
            let lastSilentAt = Int64(parts[3])
        else { return nil }
        let lastSilent = parts[2] == "-" ? nil : Int(parts[2])
        guard parts[2] == "-" || lastSilent != nil else { return nil }
        self.init(tokens: tokens, refilledAt: refilledAt, lastSilent: lastSilent, lastSilentAt: lastSilentAt)
    }
}
