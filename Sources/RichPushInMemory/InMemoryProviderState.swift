package import RichPushCore
import Synchronization

/// Provider pauses in memory, with the Redis store's rule (the later end wins; an end in the past
/// is no pause), for fast unit tests of logic.
package final class InMemoryProviderPauses: ProviderPauses {
    private let ends = Mutex<[String: Int64]>([:])
    private let now: @Sendable () -> Int64

    package init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    package func pauseEnd(_ scope: String) async throws -> Int64? {
        let time = now()
        return ends.withLock { $0[scope].flatMap { $0 > time ? $0 : nil } }
    }

    package func pause(_ scope: String, until end: Int64) async throws {
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

/// ``DeviceBackOffs`` in memory, with the Redis store's rules, for fast tests of the worker's logic.
package final class InMemoryDeviceBackOffs: DeviceBackOffs {
    private struct State {
        var holds: [String: Int64] = [:]
        var claims: [String: (owner: String, until: Int64)] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func claim(_ devices: [String], owner: String, now: Int64, until: Int64) async throws -> [String: DeviceClaimRefusal] {
        state.withLock { state in
            var refused: [String: DeviceClaimRefusal] = [:]
            for device in devices {
                if let end = state.holds[device], end > now {
                    refused[device] = .held(until: end)
                } else if let claim = state.claims[device], claim.until > now, claim.owner != owner {
                    refused[device] = .inFlight(until: claim.until)
                } else {
                    state.claims[device] = (owner, until)
                }
            }
            return refused
        }
    }

    package func release(_ devices: [String], owner: String, holding: [String: Int64], now: Int64) async throws {
        state.withLock { state in
            for device in devices where state.claims[device]?.owner == owner { state.claims[device] = nil }
            for (device, end) in holding { state.holds[device] = max(state.holds[device] ?? 0, end) }
            state.holds = state.holds.filter { $0.value >= now }
        }
    }
}
