import Synchronization

/// What one provider asked this process to wait for, learned from any batch's answers and
/// honoured by every batch at the moment each request would be written: the whole provider (a
/// project's quota, an APNs sender's 429 with `Retry-After`) and single recipients (a device
/// token or a Web Push subscription answered 429: RFC 8030 §8.4, Apple's and FCM's per-device
/// limits). A batch checks the fleet's record when it starts; this closes the gap between that
/// check and each request: requests of batches already under way that have not gone out yet
/// stay unsent once any answer asked to wait, in whatever batch it came.
///
/// Entries are kept as long as the provider asked (a recipient at most `longest`); at most
/// `limit` recipients (past it the expired ones go, then all: the fleet's record still has them).
package final class HTTP2Backoffs: Sendable {
    private let limit: Int
    private let longest: Duration
    private let providerEnd = Mutex<ContinuousClock.Instant?>(nil)
    private let count = Atomic<Int>(0)
    private let recipients = Mutex<[String: ContinuousClock.Instant]>([:])

    package init(limit: Int = 100_000, longest: Duration = .seconds(3600)) {
        self.limit = max(1, limit)
        self.longest = longest
    }

    /// How long the whole provider is still held, or nil.
    package var providerRemaining: Duration? {
        guard let end = providerEnd.withLock({ $0 }) else { return nil }
        let left = end - .now
        return left > .zero ? left : nil
    }

    /// How long `recipient` is still held, or nil.
    package func remaining(for recipient: String?) -> Duration? {
        guard let recipient, count.load(ordering: .relaxed) > 0 else { return nil }
        let end = recipients.withLock { $0[recipient] }
        guard let end else { return nil }
        let left = end - .now
        return left > .zero ? left : nil
    }

    /// Holds the whole provider for `duration` from now (the later end wins).
    package func holdProvider(for duration: Duration) {
        let end = ContinuousClock.now + min(duration, longest)
        providerEnd.withLock { current in
            if current.map({ $0 < end }) ?? true { current = end }
        }
    }

    /// Holds `recipient` for `duration` from now (the later end wins).
    package func hold(_ recipient: String, for duration: Duration) {
        let now = ContinuousClock.now
        let end = now + min(duration, longest)
        let size = recipients.withLock { recipients in
            if recipients.count >= limit {
                recipients = recipients.filter { $0.value > now }
                if recipients.count >= limit { recipients.removeAll() }
            }
            if recipients[recipient].map({ $0 < end }) ?? true { recipients[recipient] = end }
            return recipients.count
        }
        count.store(size, ordering: .relaxed)
    }

    /// `Retry-After` in seconds (RFC 9110 §10.2.3: delay-seconds; an HTTP date is not used by
    /// the push providers), or nil.
    package static func seconds(_ retryAfter: String?) -> Duration? {
        guard let retryAfter, let text = retryAfter.split(separator: " ").first, let seconds = Int(text), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}
