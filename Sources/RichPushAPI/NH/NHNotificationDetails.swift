import RichPushCore
import RichPushReport

/// A send's outcome as Notification Hubs reports it (`GET /{hub}/messages/{id}`): the
/// `NotificationDetails` document NH's SDKs parse, filled from RichPush's record and ledger.
///
/// The state: `Scheduled`, `Enqueued` (accepted, queued), `Processing` (queued with outcomes
/// already), `Completed`, `NoTargetFound` (completed with no device), `Abandoned` (failed),
/// `Cancelled`. Each device's outcome counts under its platform's element: `Success` (sent or
/// held by the platform, and what followed: fetched, shown, opened), `WrongToken` (the platform
/// said the token is dead), `Dropped` (expired before it could go), `Skipped` (a duplicate
/// suppressed), `PnsServerError` (failed); a push still being retried counts nowhere yet.
enum NHNotificationDetails {
    /// NH's names per platform: the outcome element and the `TargetPlatforms` entry, in the order
    /// the .NET SDK's reader needs the elements.
    static let platforms: [(platform: Platform, element: String, name: String)] = [
        (.apns, "ApnsOutcomeCounts", "apple"), (.gcm, "GcmOutcomeCounts", "gcm"), (.fcm, "FcmV1OutcomeCounts", "fcmv1"),
        (.webpush, "BrowserOutcomeCounts", "browser"),
    ]

    /// The document for `notification` with `status`; `platforms` names each device's platform
    /// (a device whose installation is gone counts under `fallback`, or nowhere).
    static func xml(
        notification: RichNotification, status: NotificationStatus, platforms: [String: Platform], fallback: Platform?, location: String
    ) -> String {
        var outcomes: [Platform: [String: Int]] = [:]
        var start: Int64?
        var end: Int64?
        for device in status.devices {
            guard let outcome = outcome(of: device.state), let platform = platforms[device.installation] ?? fallback else { continue }
            outcomes[platform, default: [:]][outcome, default: 0] += 1
            if let at = device.times?["at"] {
                start = min(start ?? at, at)
                end = max(end ?? at, at)
            }
        }
        let counted = outcomes.values.reduce(0) { $0 + $1.values.reduce(0, +) }
        var xml = #"<?xml version="1.0" encoding="utf-8"?>"#
        xml += #"<NotificationDetails xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" "#
        xml += #"xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += element("NotificationId", String(notification.id))
        xml += element("Location", location)
        xml += element("State", state(status.state, counted: counted))
        xml += element("EnqueueTime", time(notification.createdAt))
        if let start, let end {
            xml += element("StartTime", time(start))
            xml += element("EndTime", time(end))
        }
        if let native = notification.native { xml += element("NotificationBody", native.body) }
        if notification.target != TagExpression.everyone { xml += element("Tags", notification.target) }
        let targeted = Self.platforms.filter { outcomes[$0.platform] != nil }
        if !targeted.isEmpty { xml += element("TargetPlatforms", targeted.map(\.name).joined(separator: ",")) }
        for entry in targeted {
            xml += "<\(entry.element)>"
            for (name, count) in (outcomes[entry.platform] ?? [:]).sorted(by: { $0.key < $1.key }) {
                xml += "<Outcome>" + element("Name", name) + element("Count", String(count)) + "</Outcome>"
            }
            xml += "</\(entry.element)>"
        }
        return xml + "</NotificationDetails>"
    }

    /// NH's outcome for a device's state in the ledger (nil: not final yet).
    static func outcome(of state: String) -> String? {
        switch state {
        case "sent", "held", "fetched", "displayed", "opened": "Success"
        case "invalidToken": "WrongToken"
        case "expired": "Dropped"
        case "duplicateSuppressed": "Skipped"
        case "failed": "PnsServerError"
        default: nil
        }
    }

    static func state(_ state: DeliveryState, counted: Int) -> String {
        switch state {
        case .scheduled: "Scheduled"
        case .accepted, .queued: counted > 0 ? "Processing" : "Enqueued"
        case .failed: "Abandoned"
        case .cancelled: "Cancelled"
        case .sent, .fetched, .displayed, .opened: counted > 0 ? "Completed" : "NoTargetFound"
        }
    }

    private static func element(_ name: String, _ value: String) -> String { "<\(name)>\(value.markupEscaped)</\(name)>" }

    /// xs:dateTime in UTC, as NH writes it.
    private static func time(_ milliseconds: Int64) -> String { UTCTimestamp.iso8601(milliseconds: milliseconds) }
}
