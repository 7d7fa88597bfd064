import Synchronization

/// Holds an adapter's sends after `QUOTA_EXCEEDED`: FCM's quota is per project per rolling
/// minute and counts errors too, so hammering it only keeps it exhausted.
public final class FCMThrottle: Sendable {
    private let until = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    public func hold(for duration: Duration) {
        let end = ContinuousClock.now + duration
        until.withLock { current in if current.map({ $0 < end }) ?? true { current = end } }
    }

    /// How long sends are still held, or nil.
    public func remaining() -> Duration? {
        until.withLock { current in
            guard let end = current else { return nil }
            let left = end - ContinuousClock.now
            if left <= .zero {
                current = nil
                return nil
            }
            return left
        }
    }
}
