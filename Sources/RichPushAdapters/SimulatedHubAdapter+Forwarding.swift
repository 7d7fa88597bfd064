package import RichPushCore

/// What a platform simulator (`apns-sim`, `fcm-sim`) accepted, passed on to the hub.
extension SimulatedHubAdapter {
    /// Publishes or holds one push the platform simulator accepted, trying again with back-off
    /// (0.1 s, doubling to 2 s) while Redis is away or refuses it, for at most `patience`: the
    /// platform said yes, so the push is not dropped. A refusal comes as a failed outcome, not as
    /// a thrown error: a Redis restarted from its AOF answers `LOADING` until it has read it, and
    /// a simulator that took that outcome for a delivery lost every push it passed on meanwhile
    /// (29 pairs in one `scripts/chaos.sh` run, around a Redis restart). Returns nil once the hub
    /// took the push, else why it gave up.
    package func forward(_ push: OutgoingPush, patience: Duration) async -> String? {
        let started = ContinuousClock.now
        var backOff = Duration.milliseconds(100)
        while true {
            let failure: String
            do {
                switch try await send([push]).first {
                case .sent, .held: return nil
                case .failed(let reason, retryable: false), .invalidToken(let reason): return reason
                case .failed(let reason, retryable: true), .failedRetryAfter(let reason, _), .deferred(let reason, _),
                    .deviceDeferred(let reason, _):
                    failure = reason
                case nil: failure = "no outcome"
                }
            } catch {
                failure = "\(error)"
            }
            guard ContinuousClock.now - started < patience, !Task.isCancelled else { return failure }
            try? await Task.sleep(for: backOff)
            backOff = min(backOff * 2, .seconds(2))
        }
    }
}
