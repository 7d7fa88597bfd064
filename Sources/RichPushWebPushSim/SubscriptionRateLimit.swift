import Foundation
import Synchronization

/// A push service's limit per subscription, and the `Retry-After` windows it hands out: a
/// subscription sent more than `perMinute` messages in one clock minute gets 429 with
/// `Retry-After` until the next minute (0: no limit); any 429 it answered with `Retry-After`
/// (this limit's or an injected one) opens a window in which every further request to that
/// subscription is refused again and logged as `inside_retry_after`: RFC 8030 §8.4 asks the
/// sender to wait that long "before it makes another request to the push resource", so a
/// request inside the window is the sender's fault, and a test counts them.
final class SubscriptionRateLimit: Sendable {
    private struct State {
        var minute: [String: (minute: Int64, count: Int)] = [:]
        var windows: [String: Double] = [:]
    }

    let perMinute: Int
    private let state = Mutex(State())

    init(perMinute: Int) {
        self.perMinute = max(0, perMinute)
    }

    /// What to answer a request to `subscription` at `now` (seconds since 1970): nil to go on, or
    /// the seconds of `Retry-After` of a 429, and whether the request came inside a window.
    func check(_ subscription: String, now: Double) -> (retryAfter: Int, insideWindow: Bool)? {
        state.withLock { state -> (retryAfter: Int, insideWindow: Bool)? in
            if let end = state.windows[subscription] {
                if now < end { return (max(1, Int((end - now).rounded(.up))), true) }
                state.windows[subscription] = nil
            }
            guard perMinute > 0 else { return nil }
            let minute = Int64(now / 60)
            var current: (minute: Int64, count: Int) = state.minute[subscription].flatMap { $0.minute == minute ? $0 : nil } ?? (minute, 0)
            current.count += 1
            state.minute[subscription] = current
            guard current.count > perMinute else { return nil }
            let end = Double(minute + 1) * 60
            state.windows[subscription] = end
            return (max(1, Int((end - now).rounded(.up))), false)
        }
    }

    /// Opens a window after a 429 answered by other means (an injected fault).
    func refused(_ subscription: String, retryAfter: Int, now: Double) {
        state.withLock { state in state.windows[subscription] = max(state.windows[subscription] ?? 0, now + Double(retryAfter)) }
    }
}
