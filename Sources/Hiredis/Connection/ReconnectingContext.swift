import Logging

/// The connection's socket and its reconnect back-off; lives on the connection's thread only.
struct ReconnectingContext {
    let configuration: RedisConfiguration
    var context: RedisContext?
    private var backoff: Duration
    private var nextAttempt: ContinuousClock.Instant
    private var lastError: RedisError?

    init(configuration: RedisConfiguration) {
        self.configuration = configuration
        self.backoff = configuration.reconnectBackoff.lowerBound
        self.nextAttempt = .now
    }

    /// The live context, connecting first if needed; fails fast while the back-off runs.
    mutating func connected(logger: Logger) throws(RedisError) -> RedisContext {
        if let context { return context }
        let now = ContinuousClock.now
        if now < nextAttempt, let lastError {
            throw RedisError(
                code: .connectionUnavailable,
                message: "\(configuration.redactedURL) unavailable, next reconnect in \(nextAttempt - now): \(lastError.message)")
        }
        do {
            let context = try RedisContext(configuration: configuration)
            if lastError != nil {
                logger.info("redis reconnected", metadata: ["redis.url": "\(configuration.redactedURL)"])
            }
            self.context = context
            lastError = nil
            backoff = configuration.reconnectBackoff.lowerBound
            return context
        } catch {
            // Bad credentials will not fix themselves by retrying faster; everything else backs off too.
            lastError = error
            nextAttempt = .now + jittered(backoff)
            backoff = min(backoff * 2, configuration.reconnectBackoff.upperBound)
            throw error
        }
    }

    /// How long requests still fail fast before the next connect attempt.
    var backoffRemaining: Duration { max(.zero, ContinuousClock.now.duration(to: nextAttempt)) }

    /// Forgets a broken context; the next request reconnects at once.
    mutating func dropped() {
        context = nil
        nextAttempt = .now
    }

    private func jittered(_ duration: Duration) -> Duration {
        duration * Double.random(in: 0.5...1.0)
    }
}
