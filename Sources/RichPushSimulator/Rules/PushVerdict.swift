/// What a device's system does with a push that reached it.
package enum PushVerdict: Sendable, Hashable {
    /// Handed on now.
    case deliver(PushDelivery)
    /// Handed on later, at `at` (simulated seconds), unless `coalescing` and a later push
    /// replaced it by then (iOS keeps one background push it throttled).
    case deferred(PushDelivery, at: Double, reason: String, ticket: Int, coalescing: Bool)
    /// Never handed to the app.
    case dropped(reason: String)
}

/// How a push the system hands on reaches the user.
package enum PushDelivery: Sendable, Hashable {
    /// The app runs and handles it: in the foreground, or woken in the background, where it does
    /// the background fetch within its time.
    case launch
    /// iOS runs the app's notification service extension (`mutable-content: 1`), which has
    /// ``DeviceRules/extensionSeconds`` to fetch and attach the media, then shows the alert (the
    /// original alert, without the media, when it could not).
    case serviceExtension
    /// The system shows the alert's text itself; the app fetches the content only when the user
    /// opens the notification.
    case systemAlert
}
