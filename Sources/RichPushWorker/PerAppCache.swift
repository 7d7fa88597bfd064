import RichPushCore
import Synchronization

/// What a worker keeps per app while the app is busy (its stores, its adapter): made the first
/// time one of the app's jobs comes, and forgotten once the app has sent nothing for
/// ``idleAfter``, so an idle app costs the worker nothing. Nothing runs per app: the cache is
/// swept on use.
final class PerAppCache<Value: Sendable>: Sendable {
    /// How long an unused app's entry is kept.
    let idleAfter: Duration
    private let entries = Mutex<(values: [AppID: (value: Value, used: ContinuousClock.Instant)], swept: ContinuousClock.Instant)>(
        ([:], .now))
    /// Called with each value forgotten or replaced (outside the lock), to close what it holds.
    private let retire: @Sendable (Value) -> Void

    init(idleAfter: Duration = .seconds(600), retire: @escaping @Sendable (Value) -> Void = { _ in }) {
        self.idleAfter = idleAfter
        self.retire = retire
    }

    /// The app's value, made by `make` when there is none.
    func value(for app: AppID, make: () throws -> Value) rethrows -> Value {
        let now = ContinuousClock.now
        if let value = touch(app, now: now) { return value }
        let value = try make()
        set(value, for: app)
        return value
    }

    /// The app's value if there is one, marked used.
    func touch(_ app: AppID, now: ContinuousClock.Instant = .now) -> Value? {
        let (value, idle) = entries.withLock { entries -> (Value?, [Value]) in
            var idle: [Value] = []
            if now - entries.swept > idleAfter {
                idle = entries.values.values.filter { now - $0.used > idleAfter }.map(\.value)
                entries.values = entries.values.filter { now - $0.value.used <= idleAfter }
                entries.swept = now
            }
            guard let entry = entries.values[app] else { return (nil, idle) }
            entries.values[app]?.used = now
            return (entry.value, idle)
        }
        for value in idle { retire(value) }
        return value
    }

    /// Replaces the app's value (the one it replaces is retired).
    func set(_ value: Value, for app: AppID) {
        let replaced = entries.withLock { $0.values.updateValue((value, .now), forKey: app)?.value }
        if let replaced { retire(replaced) }
    }

    /// Changes the app's value in place (nothing is retired).
    func update(_ app: AppID, _ body: (inout Value) -> Void) {
        entries.withLock { entries in
            guard var entry = entries.values[app] else { return }
            body(&entry.value)
            entries.values[app] = entry
        }
    }

    /// Forgets every value, each given to `close` (not retired): the worker is stopping.
    func removeAll(_ close: (Value) -> Void) {
        let all = entries.withLock { entries in
            defer { entries.values.removeAll() }
            return entries.values.values.map(\.value)
        }
        for value in all { close(value) }
    }

    /// How many apps have an entry.
    var count: Int { entries.withLock { $0.values.count } }
}
