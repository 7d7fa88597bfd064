import Synchronization

/// Strings remembered for a while, bounded in number (the oldest half goes when it is full).
final class ExpiringSet: Sendable {
    private let entries = Mutex<[String: ContinuousClock.Instant]>([:])
    private let lifetime: Duration
    private let capacity: Int

    init(lifetime: Duration, capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func insert(_ value: String) {
        let now = ContinuousClock.now
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value > now }
                if entries.count >= capacity {
                    let cutoff = entries.values.sorted()[entries.count / 2]
                    entries = entries.filter { $0.value > cutoff }
                }
            }
            entries[value] = now + lifetime
        }
    }

    func contains(_ value: String) -> Bool {
        entries.withLock { entries in
            guard let expiry = entries[value] else { return false }
            if expiry > .now { return true }
            entries[value] = nil
            return false
        }
    }

    func remove(_ value: String) {
        _ = entries.withLock { $0.removeValue(forKey: value) }
    }
}
