package import Foundation

/// Renders a rich notification for a device, as the tutorial's app expects it.
///
/// The silent mode keeps the seed's keys: `{"aps":{"content-available":1}, "richId":"42",
/// "richMessage":"…", "richType":"img"}` (without the seed's `"sound":""`: a background push
/// carries nothing to show). The alert mode is for apps with a Notification Service Extension: a visible alert with
/// `mutable-content: 1` and the URL to fetch the payload from. The auto mode is chosen per device
/// by the workers (``AutoDelivery``): one of the two forms, silent unless said otherwise.
package struct PushRenderer: Sendable {
    package enum Mode: String, Sendable, Hashable, Codable, CaseIterable {
        case silent, alert, auto
    }

    /// APNs refuses payloads over 4 KiB.
    package static let maxPayloadBytes = 4096

    /// The push mode of notifications whose sender chose none (`delivery`).
    package var mode: Mode
    /// Base URL of the API, for the alert mode's fetch URL.
    package var apiBaseURL: String
    /// How long the platforms should keep trying an offline device when the sender set no `ttl`.
    package var timeToLive: Duration

    package init(mode: Mode = .silent, apiBaseURL: String = "http://127.0.0.1:8080", timeToLive: Duration = .seconds(86400)) {
        self.mode = mode
        self.apiBaseURL = apiBaseURL
        self.timeToLive = timeToLive
    }

    /// `form`: silent or alert (the notification's own when nil); `richURL`: the alert's fetch
    /// URL (the API's notification path when nil).
    package func render(
        _ notification: RichNotification, collapseID: String, now: Date = Date(), form: Mode? = nil, richURL: String? = nil
    ) throws(RenderError) -> RenderedPush {
        let mode = form.map { $0 == .auto ? .silent : $0 } ?? self.form(for: notification)
        // Keys in sorted order, as the seed's JSON had them.
        var json = JSONWriter(capacity: 96 + notification.message.utf8.count)
        json.beginObject()
        json.key("aps")
        json.beginObject()
        switch mode {
        case .silent, .auto:
            json.field("content-available", 1)
        case .alert:
            json.key("alert")
            json.beginObject()
            json.field("body", notification.message)
            json.endObject()
            json.field("category", "richPush")
            json.field("mutable-content", 1)
        }
        json.endObject()
        json.field("richId", String(notification.id))
        json.field("richMessage", notification.message)
        json.field("richType", notification.richType.rawValue)
        if mode == .alert { json.field("richUrl", richURL ?? fetchURL(of: notification)) }
        json.endObject()
        let data = json.bytes
        guard data.count <= Self.maxPayloadBytes else {
            throw RenderError(
                message:
                    "the APNs payload of notification \(notification.id) is \(data.count) bytes; APNs accepts at most \(Self.maxPayloadBytes) (shorten the message)"
            )
        }
        // A background push must be priority 5 (APNs refuses 10); an alert is 10 unless the
        // sender asked for normal.
        let priority = mode == .silent || notification.delivery.priority == .normal ? 5 : 10
        let until = deadline(of: notification, now: now)
        return RenderedPush(
            payload: data,
            pushType: mode == .silent ? "background" : "alert",
            priority: priority,
            expiration: Self.seconds(roundingUp: until),
            collapseID: String((notification.delivery.collapseID ?? collapseID).suffix(64)),
            deadline: until)
    }

    /// The mode `notification` goes in: its sender's choice, else the renderer's.
    package func mode(for notification: RichNotification) -> Mode { notification.delivery.mode ?? mode }

    /// The form `notification` is rendered in when no device's choice says otherwise: its mode,
    /// with auto's silent form.
    package func form(for notification: RichNotification) -> Mode {
        let mode = mode(for: notification)
        return mode == .auto ? .silent : mode
    }

    /// Where the app fetches `notification`'s payload with the user's credentials.
    package func fetchURL(of notification: RichNotification) -> String { "\(apiBaseURL)/api/notifications/\(notification.id)" }

    /// Until when the platform should keep trying, in milliseconds since 1970: the
    /// notification's creation plus the sender's `ttl`, to the millisecond (a late or retried
    /// send keeps the same deadline), else the renderer's time to live from now. Never before
    /// now: once the deadline has passed, deliver now or never.
    package func deadline(of notification: RichNotification, now: Date) -> Int64 {
        let current = Self.milliseconds(now)
        guard let ttl = notification.delivery.ttl else { return current + Self.milliseconds(roundingUp: timeToLive) }
        return max(current, notification.createdAt + Self.milliseconds(roundingUp: ttl))
    }

    /// How much longer the platform should keep trying (to ``deadline(of:now:)``), to the
    /// millisecond; zero once the deadline has passed.
    package func lifetime(of notification: RichNotification, now: Date) -> Duration {
        .milliseconds(deadline(of: notification, now: now) - Self.milliseconds(now))
    }

    /// Milliseconds since 1970, rounded down (so a lifetime measured from it is never short).
    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    static func milliseconds(roundingUp duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// Whole seconds for a platform that counts in seconds (`apns-expiration`, FCM's `ttl`),
    /// rounded up: a platform told a second less would drop the push before its deadline.
    package static func seconds(roundingUp milliseconds: Int64) -> Int {
        Int(milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0))
    }
}

/// The shape a push is rendered in, chosen by where it goes: the APNs payload (Apple, and the
/// simulated hub whose devices read it), FCM HTTP v1's data message, or the JSON a browser's
/// service worker decrypts (Web Push).
package enum PushFormat: String, Sendable, Hashable, Codable {
    case apns, fcm, webpush

    /// The format the workers render each platform's pushes in (APNs for the rest: the
    /// simulated hub's devices read the APNs payload); the console shows the same.
    package static let byPlatform: [Platform: PushFormat] = [.fcm: .fcm, .gcm: .fcm, .webpush: .webpush]

    package init(platform: Platform) { self = Self.byPlatform[platform] ?? .apns }
}

extension PushRenderer {
    /// `notification` in `format`; `form` and `richURL` as in ``render(_:collapseID:now:form:richURL:)``.
    package func render(
        _ notification: RichNotification, format: PushFormat, collapseID: String, form: Mode? = nil, richURL: String? = nil
    ) throws(RenderError) -> RenderedPush {
        switch format {
        case .apns: try render(notification, collapseID: collapseID, form: form, richURL: richURL)
        case .fcm: try renderFCM(notification, collapseID: collapseID, form: form, richURL: richURL)
        case .webpush: try renderWebPush(notification, form: form, richURL: richURL)
        }
    }
}
