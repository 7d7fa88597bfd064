/// The shape a push is rendered in, chosen by where it goes: the APNs payload (Apple, and the
/// simulated hub whose devices read it), FCM HTTP v1's data message, or the JSON a browser's
/// service worker decrypts (Web Push).
package enum PushFormat: String, Sendable, Hashable {
    case apns, fcm, webpush
}

extension PushRenderer {
    package func render(_ notification: RichNotification, format: PushFormat, collapseID: String) throws(RenderError) -> RenderedPush {
        switch format {
        case .apns: try render(notification, collapseID: collapseID)
        case .fcm: try renderFCM(notification, collapseID: collapseID)
        case .webpush: try renderWebPush(notification)
        }
    }
}
