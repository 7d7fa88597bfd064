/// A template's `Expiry` (Azure Notification Hubs'): the time after which a push rendered from it
/// is no longer worth delivering, a W3C date-time (``W3CDateTime``), written as a literal or as an
/// expression of the send's properties (`$(expiry)`), rendered as a header's value is. It sets the
/// push's deadline as `apns-expiration` does (APNs' expiration, Web Push's TTL; an FCM template
/// sets `android.ttl` in its body); the worker fails a push whose expiry is already past as
/// `expired`; an empty one (a missing property, NH's rule) sets none.
package enum TemplateExpiry {
    /// Applies the rendered expiry `text` to `push`: nil, or why it is refused.
    package static func apply(_ text: String, to push: inout RenderedPush) -> String? {
        let trimmed = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !trimmed.isEmpty else { return nil }
        guard let milliseconds = W3CDateTime.milliseconds(trimmed) else {
            return "expiry is a W3C date-time such as 2026-12-24T18:00Z or 2026-12-24T18:00:00+01:00, got '\(text.prefix(40))'"
        }
        push.deadline = max(1, milliseconds)
        push.expiration = Int((max(1, milliseconds) + 999) / 1000)
        return nil
    }
}
