import RichPushCore
import Synchronization

/// Provider holds in memory, with the Redis store's rule (the later end wins; an end in the past
/// is no hold), for fast unit tests of logic.
package final class InMemoryProviderHolds: ProviderHolds {
    private let ends = Mutex<[String: Int64]>([:])
    private let now: @Sendable () -> Int64

    package init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    package func holdEnd(_ scope: String) async throws -> Int64? {
        let time = now()
        return ends.withLock { $0[scope].flatMap { $0 > time ? $0 : nil } }
    }

    package func hold(_ scope: String, until end: Int64) async throws {
        ends.withLock { $0[scope] = max($0[scope] ?? 0, end) }
    }
}

/// Dead tokens in memory, as ``GoneTokens`` says, for fast unit tests of logic.
package final class InMemoryGoneTokens: GoneTokens {
    private let marks = Mutex<[String: Int64]>([:])

    package init() {}

    package func gone(among handles: [String]) async throws -> [String: Int64] {
        marks.withLock { marks in
            var found: [String: Int64] = [:]
            for handle in handles { if let time = marks[handle] { found[handle] = time } }
            return found
        }
    }

    package func markGone(_ handles: [String], at time: Int64) async throws {
        marks.withLock { marks in for handle in handles { marks[handle] = time } }
    }
}

/// ``DeviceBackOffs`` in memory, for fast tests of the worker's logic.
package final class InMemoryDeviceBackOffs: DeviceBackOffs {
    private let ends = Mutex<[String: Int64]>([:])

    package init() {}

    package func held(among devices: [String], now: Int64) async throws -> [String: Int64] {
        ends.withLock { ends in
            var held: [String: Int64] = [:]
            for device in devices { if let end = ends[device], end > now { held[device] = end } }
            return held
        }
    }

    package func hold(_ until: [String: Int64], now: Int64) async throws {
        ends.withLock { ends in
            for (device, end) in until { ends[device] = max(ends[device] ?? 0, end) }
            ends = ends.filter { $0.value >= now }
        }
    }
}
