extension PushRenderer {
    /// The rich push's own values, which every template can use as properties (`$(richId)`,
    /// `$(richUrl)` the payload's fetch URL, `$(richType)`, `$(richMessage)`); a send's property
    /// of the same name is overridden.
    package func builtInProperties(of notification: RichNotification) -> [String: String] {
        [
            "richId": String(notification.id), "richUrl": "\(apiBaseURL)/api/notifications/\(notification.id)",
            "richType": notification.richType.rawValue, "richMessage": notification.message,
        ]
    }
}
