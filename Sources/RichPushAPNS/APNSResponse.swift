package import Foundation

/// What to do with Apple's answer to one push.
package enum APNSAction: Sendable, Hashable {
    /// 200: delivered to Apple; the `apns-id` it confirmed.
    case sent(apnsID: String)
    /// The device token is dead (410 `Unregistered`/`ExpiredToken`) since `since` (Apple's
    /// timestamp): remove the registration only if it is older than that.
    case unregistered(since: Date?, reason: APNSReason)
    /// The provider token was refused (403 `ExpiredProviderToken`/`InvalidProviderToken`):
    /// take a fresh token once, then try again.
    case refreshToken(reason: APNSReason)
    /// Worth trying again later (500, 503, shutdown, unknown statuses), after `after` if APNs said.
    case retry(reason: APNSReason, after: Duration?)
    /// 429 `TooManyRequests` without `Retry-After`: too many pushes to this device token, so only
    /// this push waits (no time given: ``APNSPushAdapter/throttleWait``).
    case deviceThrottled(reason: APNSReason, after: Duration?)
    /// 429 with `Retry-After`, or `TooManyProviderTokenUpdates`: the sender is asked to wait, so
    /// the fleet holds every push to this APNs sender until then.
    case throttled(reason: APNSReason, after: Duration?)
    /// This push can never succeed as it is (400, 403 others, 404, 405, 413): fail it, do not retry.
    case permanent(reason: APNSReason)
}

/// Maps Apple's status and JSON body (`{"reason": …, "timestamp": ms}`) to an action. Never
/// throws: a body that is not JSON keeps its text as the reason.
package enum APNSResponse {
    package static func action(status: Int, body: [UInt8], apnsID: String?, retryAfter: String? = nil) -> APNSAction {
        if status == 200 { return .sent(apnsID: apnsID ?? "") }
        let parsed = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        let reason =
            (parsed?["reason"] as? String).map(APNSReason.init(rawValue:))
            ?? .other(body.isEmpty ? "HTTP \(status)" : String(decoding: body.prefix(200), as: UTF8.self))
        switch status {
        case 410:
            let timestamp = (parsed?["timestamp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
            return .unregistered(since: timestamp, reason: reason)
        case 403 where reason == .expiredProviderToken || reason == .invalidProviderToken:
            return .refreshToken(reason: reason)
        case 400, 403, 404, 405, 413:
            return .permanent(reason: reason)
        default:
            let after = retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds(max(0, min($0, 3600))) }
            if status == 429 {
                return after != nil || reason == .tooManyProviderTokenUpdates
                    ? .throttled(reason: reason, after: after) : .deviceThrottled(reason: reason, after: after)
            }
            return .retry(reason: reason, after: after)
        }
    }

    /// How long an answer asks to wait before the next push to its device token (a 429
    /// `TooManyRequests` without `Retry-After`: `wait`), or nil when it does not.
    package static func holdsDevice(status: Int, retryAfter: String?, body: [UInt8], wait: Duration) -> Duration? {
        guard status == 429 else { return nil }
        if case .deviceThrottled(_, let after) = action(status: status, body: body, apnsID: nil, retryAfter: retryAfter) {
            return after ?? wait
        }
        return nil
    }

    /// Whether an answer holds the whole sender (what stops the rest of a batch).
    package static func holdsSender(status: Int, retryAfter: String?, body: [UInt8]) -> Bool {
        guard status == 429 else { return false }
        if case .throttled = action(status: status, body: body, apnsID: nil, retryAfter: retryAfter) { return true }
        return false
    }
}
