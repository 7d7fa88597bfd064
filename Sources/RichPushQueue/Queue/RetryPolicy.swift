/// Exponential back-off with full jitter and a cap ("Exponential Backoff And Jitter", AWS, 2015):
/// the delay before attempt n+1 is uniform in [0, min(cap, base · 2ⁿ)], so retries of many
/// jobs that failed together spread out instead of stampeding back at once.
package struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first one included; after the last failure the job is dead-lettered.
    package var maxAttempts: Int
    package var base: Duration
    package var cap: Duration

    package init(maxAttempts: Int = 5, base: Duration = .milliseconds(200), cap: Duration = .seconds(300)) {
        self.maxAttempts = maxAttempts
        self.base = base
        self.cap = cap
    }

    /// The upper bound of the delay after `attempt` failures (attempt 1 is the first failure).
    package func ceiling(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 40)
        let grown = base * Double(1 << min(exponent, 62))
        return min(grown, cap)
    }

    /// A random delay in [0, ceiling]; `random` is injectable for tests.
    package func delay(afterAttempt attempt: Int, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Duration {
        ceiling(afterAttempt: attempt) * random(0...1)
    }

    /// Whether a job that has failed `attempt` times may run again.
    package func allowsRetry(afterAttempt attempt: Int) -> Bool {
        attempt < maxAttempts
    }
}
