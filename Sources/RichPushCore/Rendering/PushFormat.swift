/// The shape a push is rendered in, chosen by where it goes: the APNs payload (Apple, and the
/// simulated hub whose devices read it) or FCM HTTP v1's data message.
public enum PushFormat: String, Sendable, Hashable {
    case apns, fcm
}

extension PushRenderer {
    public func render(_ notification: RichNotification, format: PushFormat, collapseID: String) throws(RenderError) -> RenderedPush {
        switch format {
        case .apns: try render(notification, collapseID: collapseID)
        case .fcm: try renderFCM(notification, collapseID: collapseID)
        }
    }
}
