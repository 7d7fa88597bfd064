import RichPushCore

/// A device catching up when its app opens: the rich notifications addressed to it after its
/// cursor whose payload it has not fetched (APNs keeps one push for an offline iPhone, iOS one
/// throttled background push; the others never reached the app). There is no per-device index
/// of pushes (it would cost the fan-out a write per push), so the newest ``window`` notification
/// ids after the cursor are asked, ``batch`` per round trip, oldest first.
struct MissedPushes: Sendable {
    /// How many notification ids after the cursor one call looks through.
    static let window = 2_000
    /// Ids asked per round trip.
    static let batch = 500
    static let maxLimit = 100

    /// What the device gets: the notifications, oldest first; where the next call starts; and
    /// whether every id after `after` was looked through (false: more than ``window`` ids were
    /// given since, and the older ones were skipped).
    struct Page: Codable, Sendable {
        var installation: String
        var notifications: [SummaryView]
        var cursor: String
        var complete: Bool
    }

    let notifications: any NotificationStore

    /// Up to `limit` notifications after id `after` that `installation` missed.
    func page(of installation: String, after: Int, limit: Int) async throws -> Page {
        let ceiling = try await notifications.idCeiling()
        let low = max(after + 1, ceiling - Self.window)
        var found: [Int] = []
        var examined = low - 1
        var start = low
        while start < ceiling && found.count < limit {
            let ids = Array(start..<min(start + Self.batch, ceiling))
            let missed = try await notifications.unfetched(by: installation, among: ids)
            if found.count + missed.count >= limit {
                let taken = missed.prefix(limit - found.count)
                found += taken
                examined = taken.last ?? examined
                break
            }
            found += missed
            examined = ids.last ?? examined
            start += Self.batch
        }
        let records = try await notifications.notifications(ids: found)
        return Page(
            installation: installation, notifications: records.map(SummaryView.init), cursor: String(max(after, examined)),
            complete: low == after + 1)
    }
}
