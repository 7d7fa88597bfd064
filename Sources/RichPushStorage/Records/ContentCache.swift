import Synchronization

/// A bounded in-process cache of immutable values: payloads by content hash, records by id.
/// Content-addressed bytes never change, so a hit is always right; records are kept for a short
/// TTL because they expire in Redis. Eviction is first-in-first-out within the byte budget.
final class ContentCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var values: [Key: (value: Value, cost: Int, expires: ContinuousClock.Instant)] = [:]
        var order: [Key] = []
        var head = 0
        var cost = 0
    }

    private let state = Mutex(State())
    private let budget: Int
    private let ttl: Duration

    init(budget: Int, ttl: Duration) {
        self.budget = budget
        self.ttl = ttl
    }

    func value(for key: Key) -> Value? {
        state.withLock { state in
            guard let entry = state.values[key] else { return nil }
            guard entry.expires > .now else {
                state.values[key] = nil
                state.cost -= entry.cost
                return nil
            }
            return entry.value
        }
    }

    func insert(_ value: Value, for key: Key, cost: Int) {
        guard cost <= budget / 4 else { return }
        state.withLock { state in
            if let old = state.values[key] { state.cost -= old.cost } else { state.order.append(key) }
            state.values[key] = (value, cost, .now + ttl)
            state.cost += cost
            while state.cost > budget, state.head < state.order.count {
                let evicted = state.order[state.head]
                state.head += 1
                if let entry = state.values.removeValue(forKey: evicted) { state.cost -= entry.cost }
            }
            if state.head > 4096 && state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    func remove(_ key: Key) {
        state.withLock { state in
            if let old = state.values.removeValue(forKey: key) { state.cost -= old.cost }
        }
    }

    func removeAll() {
        state.withLock { $0 = State() }
    }
}
