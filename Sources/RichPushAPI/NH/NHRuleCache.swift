import RichPushCore
import RichPushNH
import Synchronization

/// Each app's Notification Hubs rules, read from the app store and remembered for
/// ``AppDirectory/memory`` (5 s): a rotated or removed key stops signing within that time on
/// every replica, and a stream of sends costs no round trip each.
final class NHRuleCache: Sendable {
    /// The rules of an app, nil for no such app.
    typealias Read = @Sendable (AppID) async throws -> [NHAccessRule]?

    private let read: Read
    private let known = Mutex<[AppID: (rules: [NHAccessRule], checked: ContinuousClock.Instant)]>([:])

    init(read: @escaping Read) {
        self.read = read
    }

    /// The app's rules; none for an app that does not exist or has none.
    func rules(of app: AppID) async throws -> [NHAccessRule] {
        let now = ContinuousClock.now
        if let entry = known.withLock({ $0[app] }), now - entry.checked < AppDirectory.memory { return entry.rules }
        let rules = try await read(app) ?? []
        known.withLock { known in
            // Bounded: hub names that are no app are forgotten with the rest past 10,000.
            if known.count >= 10_000 { known.removeAll(keepingCapacity: true) }
            known[app] = (rules, now)
        }
        return rules
    }
}
