/// A user's status webhook: where RichPush POSTs the events it wants, signed with its secret.
package struct Webhook: Sendable, Hashable {
    /// `wh_` and 16 lowercase hex digits.
    package var id: String
    /// The user who created it: it hears about that user's notifications (all users' with ``allUsers``).
    package var owner: String
    package var url: String
    package var events: Set<WebhookEventType>
    /// Every user's notifications, not only the owner's (admins only).
    package var allUsers: Bool
    package var description: String
    /// The HMAC-SHA256 key of `X-RichPush-Signature`; never shown after creation.
    package var secret: String
    /// Milliseconds since 1970.
    package var createdAt: Int64

    package init(
        id: String, owner: String, url: String, events: Set<WebhookEventType>, allUsers: Bool, description: String, secret: String,
        createdAt: Int64
    ) {
        self.id = id
        self.owner = owner
        self.url = url
        self.events = events
        self.allUsers = allUsers
        self.description = description
        self.secret = secret
        self.createdAt = createdAt
    }

    /// Whether an event of `type` about a notification created by `creator` goes to this webhook.
    package func wants(_ type: WebhookEventType, creator: String) -> Bool {
        events.contains(type) && (allUsers || owner == creator)
    }

    /// Whether `id` has the shape of a webhook id (so it can be used in a key name).
    package static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 19 && id.hasPrefix("wh_") && id.utf8.dropFirst(3).allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Most webhooks one user may have.
    package static let maxPerUser = 10
}

/// What a webhook can ask to hear about. The names are the JSON `type` of each event.
package enum WebhookEventType: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The platform (or the hub) accepted the push for a device (`held`: the device is offline).
    case sent
    /// The push failed for good.
    case failed
    /// The platform refused the device's token; the installation was removed.
    case invalidToken
    /// The device fetched the payload.
    case fetched
    /// The device showed the local notification.
    case displayed
    /// The user opened it (tap or More).
    case opened
    /// The hub dropped a push held for an offline device when its ttl ran out.
    case expired
    /// The notification was cancelled before all its pushes went out.
    case cancelled

    package static func < (lhs: WebhookEventType, rhs: WebhookEventType) -> Bool { lhs.rawValue < rhs.rawValue }
}
