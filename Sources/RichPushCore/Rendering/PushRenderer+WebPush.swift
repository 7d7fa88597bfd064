package import Foundation

extension PushRenderer {
    /// The most plaintext one Web Push message carries (RFC 8291 §4: one 4,096-byte record).
    package static let maxWebPushPlaintextBytes = 3993
    /// Push services keep a message at most about 28 days (Mozilla's autopush: 60 days; FCM's
    /// web push: 28): the TTL sent is capped there.
    package static let maxWebPushTimeToLive: Duration = .seconds(28 * 86400)

    /// The rich push's browser form: the JSON the service worker decrypts,
    /// `{"richId", "richMessage", "richType"}` (and `richUrl` in alert mode), from which it fetches
    /// the payload with the user's credentials and shows the notification with its "More" action.
    /// `collapseID` is the sender's collapse id only (sent as `Topic`), as for FCM; the TTL is the
    /// notification's remaining life in whole seconds, rounded up.
    package func renderWebPush(
        _ notification: RichNotification, now: Date = Date(), form: Mode? = nil, richURL: String? = nil
    ) throws(RenderError) -> RenderedPush {
        let mode = form.map { $0 == .auto ? .silent : $0 } ?? self.form(for: notification)
        var json = JSONWriter(capacity: 96 + notification.message.utf8.count)
        json.beginObject()
        json.field("richId", String(notification.id))
        json.field("richMessage", notification.message)
        json.field("richType", notification.richType.rawValue)
        if mode == .alert { json.field("richUrl", richURL ?? fetchURL(of: notification)) }
        json.endObject()
        guard json.bytes.count <= Self.maxWebPushPlaintextBytes else {
            throw RenderError(
                message:
                    "the Web Push message of notification \(notification.id) is \(json.bytes.count) bytes; one message carries at most "
                    + "\(Self.maxWebPushPlaintextBytes) (shorten the message)")
        }
        let current = Self.milliseconds(now)
        let until = min(deadline(of: notification, now: now), current + Self.milliseconds(roundingUp: Self.maxWebPushTimeToLive))
        // RFC 8030 §5.3: `high` is for time-sensitive messages (calls, alerts); an ordinary
        // notification is `normal` unless its sender asked for `priority: high`.
        return RenderedPush(
            payload: json.bytes, pushType: "webpush", priority: notification.delivery.priority == .high ? 10 : 5,
            expiration: Self.seconds(roundingUp: until), collapseID: notification.delivery.collapseID ?? "", deadline: until)
    }
}
