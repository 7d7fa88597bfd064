package import RichPushCore

/// The `Urgency` header (RFC 8030 §5.3): how soon the user agent wants the message, so a push
/// service can hold back low ones for a device on battery.
package enum WebPushUrgency: String, Sendable, Hashable, CaseIterable {
    case veryLow = "very-low"
    case low
    case normal
    case high

    /// The sender's priority in RFC 8030's terms: `high` wakes the device as an APNs 10 or an FCM
    /// high message would; `normal` is the RFC's default.
    package init(_ priority: DeliveryOptions.Priority) {
        switch priority {
        case .high: self = .high
        case .normal: self = .normal
        }
    }
}
