/// What an app may do, all its users together (0: no limit): the operator's bound on one app,
/// beside each user's own quotas (`richpush api --quota-…`).
package struct AppLimits: Sendable, Hashable, Codable {
    /// Notifications the app's users may create per minute, together.
    package var notificationsPerMinute: Int
    /// Devices one notification may address.
    package var audience: Int
    /// Payload bytes of the app's notifications still within the retention.
    package var payloadBytes: Int

    package init(notificationsPerMinute: Int = 0, audience: Int = 0, payloadBytes: Int = 0) {
        self.notificationsPerMinute = notificationsPerMinute
        self.audience = audience
        self.payloadBytes = payloadBytes
    }

    /// No limit at all.
    package static let none = AppLimits()
    package var isNone: Bool { self == .none }

    /// The name a limit has in JSON (the API's body, the app's record) and in errors.
    package static let names = ["notificationsPerMinute", "audience", "payloadBytes"]

    /// The most a limit may be set to.
    package static let maximum = 1 << 40

    /// Nil when every limit is 0 … ``maximum``.
    package var problem: String? {
        for (name, value) in zip(Self.names, [notificationsPerMinute, audience, payloadBytes]) where !(0...Self.maximum).contains(value) {
            return "limits.\(name) is 0 (no limit) to \(Self.maximum), got \(value)"
        }
        return nil
    }

    /// These limits with the ones given replaced (nil: kept).
    package func replacing(notificationsPerMinute: Int? = nil, audience: Int? = nil, payloadBytes: Int? = nil) -> AppLimits {
        AppLimits(
            notificationsPerMinute: notificationsPerMinute ?? self.notificationsPerMinute, audience: audience ?? self.audience,
            payloadBytes: payloadBytes ?? self.payloadBytes)
    }

    /// The quota subject the app's own counters are kept under, in its registry: no user is
    /// named so (`*` is in no user name).
    package static let quotaSubject = "*app"
}
