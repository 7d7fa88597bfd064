import RichPushCore
import Synchronization

/// What was read of each app, remembered for ``AppDirectory/memory`` (5 s) whatever it was, then
/// read again: a change made by another replica or the CLI is seen within that time, and a stream
/// of requests naming an app costs no round trip each. Bounded: past 10,000 apps (names of apps
/// that do not exist included) everything is forgotten at once.
final class PerAppMemory<Value: Sendable>: Sendable {
    private let known = Mutex<[AppID: (value: Value, checked: ContinuousClock.Instant)]>([:])

    /// What `read` gave for `app` less than ``AppDirectory/memory`` ago, else what it gives now.
    func value(for app: AppID, read: () async throws -> Value) async throws -> Value {
        let now = ContinuousClock.now
        if let entry = known.withLock({ $0[app] }), now - entry.checked < AppDirectory.memory { return entry.value }
        let value = try await read()
        known.withLock { known in
            if known.count >= 10_000 { known.removeAll(keepingCapacity: true) }
            known[app] = (value, now)
        }
        return value
    }

    /// Forgets what is known of `app`.
    func forget(_ app: AppID) {
        _ = known.withLock { $0.removeValue(forKey: app) }
    }
}
