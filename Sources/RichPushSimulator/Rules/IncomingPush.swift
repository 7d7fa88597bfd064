/// What a device's system needs to know of a push to apply its rules: the kind and the priority
/// the provider carried it with.
package struct IncomingPush: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// iOS `apns-push-type: background` (`content-available` alone), an FCM data message, a
        /// web push: it wakes the app, which does the rest.
        case background
        /// Shown by the system. `serviceExtension`: iOS runs the app's notification service
        /// extension first (`mutable-content: 1`).
        case alert(serviceExtension: Bool)
    }

    package var kind: Kind
    /// FCM `android.priority: HIGH`, APNs priority 10.
    package var highPriority: Bool

    package init(kind: Kind, highPriority: Bool) {
        self.kind = kind
        self.highPriority = highPriority
    }
}
