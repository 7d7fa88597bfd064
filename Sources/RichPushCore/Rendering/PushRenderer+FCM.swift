package import Foundation

extension PushRenderer {
    /// FCM's limit on a data message's payload (the `data` keys and values).
    package static let maxFCMDataBytes = 4096
    /// FCM keeps an undelivered message at most 28 days.
    package static let maxFCMTimeToLive: Duration = .seconds(28 * 86400)

    /// The rich push's Android form for FCM HTTP v1: a high-priority data message carrying
    /// `richId`, `richType` and `richMessage`, which wakes the app to fetch the payload and post
    /// its own notification with a "More" action. The payload is the v1 `Message` without its
    /// target, `{"android":{…},"data":{…}}`; the FCM adapter adds each device's token.
    ///
    /// The alert mode is a notification message the system shows itself (title, body, the
    /// `richPush` click action; with the fetch URL as `richUrl` in `data`, so the app's More
    /// fetches it with the user's credentials). The system would fetch a notification `image`
    /// without credentials, so none is set: the payload URL needs Basic auth.
    ///
    /// `collapseID` (the notification id) is not sent: only a sender's own collapse id becomes
    /// `collapse_key`. It is kept so both platforms render from the same call.
    package func renderFCM(
        _ notification: RichNotification, collapseID: String, now: Date = Date(), form: Mode? = nil, richURL: String? = nil
    ) throws(RenderError) -> RenderedPush {
        let mode = form.map { $0 == .auto ? .silent : $0 } ?? self.form(for: notification)
        var data = [
            ("richId", String(notification.id)), ("richMessage", notification.message), ("richType", notification.richType.rawValue),
        ]
        if mode == .alert { data.append(("richUrl", richURL ?? fetchURL(of: notification))) }
        let dataBytes = data.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        guard dataBytes <= Self.maxFCMDataBytes else {
            throw RenderError(
                message:
                    "the FCM data payload of notification \(notification.id) is \(dataBytes) bytes; FCM accepts at most \(Self.maxFCMDataBytes) (shorten the message)"
            )
        }
        // FCM counts ttl in whole seconds (rounding a fraction down): rounded up here, so FCM
        // never drops the push before its deadline.
        let current = Self.milliseconds(now)
        let until = min(deadline(of: notification, now: now), current + Self.milliseconds(roundingUp: Self.maxFCMTimeToLive))
        let seconds = Self.seconds(roundingUp: until - current)
        // Only the sender's collapse id: FCM keeps at most 4 collapse keys per offline device
        // (which ones is up to FCM) and up to 100 messages without one, so the notification id
        // as collapse key lost all but 4 notifications. A resend after a crash is dropped by the
        // app, which ignores a richId it has shown.
        let collapseKey = notification.delivery.collapseID.map { String($0.suffix(64)) }
        var json = JSONWriter(capacity: 160 + notification.message.utf8.count)
        json.beginObject()
        json.key("android")
        json.beginObject()
        // HIGH: the data message must wake the app now (FCM may lower it for apps that show
        // nothing; this pattern always does).
        if let collapseKey { json.field("collapse_key", collapseKey) }
        json.field("priority", notification.delivery.priority == .normal ? "NORMAL" : "HIGH")
        json.field("ttl", "\(seconds)s")
        if mode == .alert {
            json.key("notification")
            json.beginObject()
            json.field("click_action", "richPush")
            json.endObject()
        }
        json.endObject()
        json.key("data")
        json.beginObject()
        for (name, value) in data { json.field(name, value) }
        json.endObject()
        if mode == .alert {
            json.key("notification")
            json.beginObject()
            json.field("body", notification.message)
            json.field("title", "Notification")
            json.endObject()
        }
        json.endObject()
        return RenderedPush(
            payload: json.bytes, pushType: mode == .alert ? "notification" : "data",
            priority: notification.delivery.priority == .normal ? 5 : 10,
            expiration: Self.seconds(roundingUp: until), collapseID: collapseKey ?? "", deadline: until)
    }
}
