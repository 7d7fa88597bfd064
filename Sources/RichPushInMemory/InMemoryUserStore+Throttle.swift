package import RichPushCore

extension InMemoryUserStore {
    /// As the Redis script: refuses (the seconds to wait) while the pair's or the address's
    /// failures are in their delay, else charges both with one failure in advance.
    package func reserveLoginAttempt(user: String, address: String, policy: LoginThrottle) async throws -> Int? {
        let now = ContinuousClock.now
        return state.withLock { state in
            let pair = Self.live(state.pairs[user]?[address], now: now)
            let byAddress = Self.live(state.addresses[address], now: now)
            let wait = max(
                Self.wait(pair, free: policy.freeFailuresPerPair, now: now, policy: policy),
                Self.wait(byAddress, free: policy.freeFailuresPerAddress, now: now, policy: policy))
            if wait > 0 { return wait }
            state.pairs[user, default: [:]][address] = Failures(count: (pair?.count ?? 0) + 1, last: now, expires: now + policy.memory)
            state.addresses[address] = Failures(count: (byAddress?.count ?? 0) + 1, last: now, expires: now + policy.memory)
            return nil
        }
    }

    /// Clears the pair and refunds the address's advance charge.
    package func loginSucceeded(user: String, address: String) async throws {
        state.withLock { state in
            state.pairs[user]?[address] = nil
            guard var failures = Self.live(state.addresses[address], now: .now) else {
                state.addresses[address] = nil
                return
            }
            failures.count -= 1
            state.addresses[address] = failures.count > 0 ? failures : nil
        }
    }

    /// Counts the pairs it cleared that had not expired, as Redis's `DEL` does.
    package func unlock(user: String, address: String?) async throws -> Int {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let address { return Self.live(state.pairs[user]?.removeValue(forKey: address), now: now) == nil ? 0 : 1 }
            return (state.pairs.removeValue(forKey: user) ?? [:]).values.count { Self.live($0, now: now) != nil }
        }
    }

    /// Failures are forgotten `policy.memory` after the last one.
    private static func live(_ failures: Failures?, now: ContinuousClock.Instant) -> Failures? {
        guard let failures, now < failures.expires else { return nil }
        return failures
    }

    /// Whole seconds left of the delay after the last failure, 0 when none (rounded up, as the script).
    private static func wait(_ failures: Failures?, free: Int, now: ContinuousClock.Instant, policy: LoginThrottle) -> Int {
        guard let failures, failures.count >= free else { return 0 }
        let delay = min(policy.maxDelay, policy.firstDelay * Double(1 << min(failures.count - free, 40)))
        let left = failures.last + delay - now
        guard left > .zero else { return 0 }
        return Int((Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18).rounded(.up))
    }
}
