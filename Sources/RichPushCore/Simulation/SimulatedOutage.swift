import Synchronization

/// A provider's limit that runs out mid-run, as a fault for the platform simulators (tests and
/// `scripts/chaos.sh`): after `after` requests it refuses every request for `seconds`, each with
/// 429 and a `Retry-After` of the time left (rounded up), then answers normally again. Once by
/// count; ``start(now:)`` starts one on demand.
package final class SimulatedOutage: Sendable {
    package let after: Int
    package let seconds: Double
    private let state = Mutex<(requests: Int, endsAt: Double?)>((0, nil))

    package init(after: Int, seconds: Double) {
        self.after = max(0, after)
        self.seconds = max(0, seconds)
    }

    /// Parses `AFTER:SECONDS` (e.g. `100:20`: after 100 requests, 20 seconds of 429).
    package convenience init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let after = Int(parts[0]), after >= 0, let seconds = Double(parts[1]), seconds > 0, seconds <= 3600 else {
            return nil
        }
        self.init(after: after, seconds: seconds)
    }

    /// Starts an outage of `seconds` now, whatever the count (a fault injected on demand, e.g. by
    /// a signal); a later call starts another.
    package func start(now: Double) {
        state.withLock { $0.endsAt = now + seconds }
    }

    /// For one request at `now` (seconds since 1970): nil to answer it as usual, else the
    /// seconds to put in `Retry-After`.
    package func refusal(now: Double) -> Int? {
        state.withLock { state in
            if let end = state.endsAt {
                return now < end ? max(1, Int((end - now).rounded(.up))) : nil
            }
            guard state.requests >= after else {
                state.requests += 1
                return nil
            }
            state.endsAt = now + seconds
            return max(1, Int(seconds.rounded(.up)))
        }
    }
}
