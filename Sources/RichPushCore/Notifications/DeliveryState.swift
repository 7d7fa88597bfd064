/// How far a rich notification got, in order. DESIGN.md: accepted → (scheduled →) queued → sent →
/// fetched → displayed → opened; each later state implies the earlier ones. `failed`: a delivery
/// job of it gave up (was dead-lettered) before any of its pushes went out; a push that goes out
/// later moves it on to `sent`, and a replay of the dead letter back to `queued`. `cancelled`
/// comes last so that nothing moves a cancelled notification on. Stored, only the states no
/// counter tells are written; the others are ``derived(stored:counts:)``.
package enum DeliveryState: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case accepted, scheduled, queued, failed, sent, fetched, displayed, opened, cancelled

    package static func < (lhs: DeliveryState, rhs: DeliveryState) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The states a notification's counters imply, furthest first: a push sent (or held by the
    /// platform) means `sent`, a fetch `fetched`, a receipt `displayed` or `opened`.
    package static let impliedByCounters: [(state: DeliveryState, counters: [DeliveryCounter])] = [
        (.opened, [.opened]), (.displayed, [.displayed]), (.fetched, [.fetched]), (.sent, [.sent, .held]),
    ]

    /// A notification's state from what its status hash stores: the state written there (the
    /// ones no counter tells: accepted, scheduled, queued, failed, cancelled; a status written
    /// before the state was derived may hold a later one) or the furthest its counters imply,
    /// whichever is further. Deriving it saves every push and receipt a read and a write of it.
    package static func derived(stored: DeliveryState?, counts: (DeliveryCounter) -> Int) -> DeliveryState {
        let stored = stored ?? .accepted
        guard let implied = impliedByCounters.first(where: { $0.counters.contains { counts($0) > 0 } })?.state else { return stored }
        return max(stored, implied)
    }
}

/// The outcome counters a notification's status shows. `held`: the platform accepted the push for
/// a device that is offline and keeps it (one per collapse id) until it is back or its ttl runs
/// out; `expired`: a held push whose ttl ran out first.
package enum DeliveryCounter: String, Sendable, Hashable, Codable, CaseIterable {
    case sent, held, retried, invalidToken, failed, duplicateSuppressed, fetched, displayed, opened, expired
}

/// What a device reports back through the receipts route.
package enum ReceiptKind: String, Sendable, Hashable, Codable, CaseIterable {
    case displayed, opened

    package var state: DeliveryState {
        switch self {
        case .displayed: .displayed
        case .opened: .opened
        }
    }
}
