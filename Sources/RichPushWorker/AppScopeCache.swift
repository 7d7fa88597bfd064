import RichPushCore
import Synchronization

/// What a worker keeps per app while the app is busy (its stores, its adapter): made the first
/// time one of the app's jobs comes, and forgotten once the app has sent nothing for
/// ``idleAfter``, so an idle app costs the worker nothing. Nothing runs per app: the cache is
/// swept on use.
final class AppScopeCache<Value: Sendable>: Sendable {
    /// How long an unused app's entry is kept.
    let idleAfter: Duration
    private let entries = Mutex<(values: [AppID: (value: Value, used: ContinuousClock.Instant)], swept: ContinuousClock.Instant)>(([:], .now))

    init(idleAfter: Duration = .seconds(600)) {
        self.idleAfter = idleAfter
    }

    /// The app's value, made by `make` when there is none.
    func value(for app: AppID, make: () throws -> Value) rethrows -> Value {
        let now = ContinuousClock.now
        if let value = touch(app, now: now) { return value }
        let value = try make()
        entries.withLock { $0.values[app] = (value, now) }
        return value
    }

    /// The app's value if there is one, marked used.
    func touch(_ app: AppID, now: ContinuousClock.Instant = .now) -> Value? {
        entries.withLock { entries in
            if now - entries.swept > idleAfter {
                entries.values = entries.values.filter { now - $0.value.used <= idleAfter }
                entries.swept = now
            }
            guard let entry = entries.values[app] else { return nil }
            entries.values[app]?.used = now
            return entry.value
        }
    }

    /// Replaces the app's value.
    func set(_ value: Value, for app: AppID) {
        entries.withLock { $0.values[app] = (value, .now) }
    }

    /// How many apps have an entry.
    var count: Int { entries.withLock { $0.values.count } }
}
