package import Foundation

/// One push message the simulator accepted (RFC 8030 §5): the encrypted body as sent and the
/// headers a user agent gets with it. Also what a subscriber receives over its WebSocket, as the
/// `message` of a ``SubscriberFrame``.
package struct PushMessage: Codable, Sendable, Equatable {
    /// The push message resource's id (the last part of the 201's `Location`).
    package let id: String
    package let subscriptionId: String
    /// The body exactly as the application server sent it (base64 in JSON).
    package let body: Data
    /// `aes128gcm`, or nil for a message without payload.
    package let contentEncoding: String?
    /// Seconds, as accepted (after the service's cap).
    package let ttl: Int
    package let urgency: String
    package let topic: String?
    /// Seconds since 1970 when the service accepted it.
    package let receivedAt: Double

    package init(
        id: String, subscriptionId: String, body: Data, contentEncoding: String?, ttl: Int, urgency: String, topic: String?,
        receivedAt: Double
    ) {
        self.id = id
        self.subscriptionId = subscriptionId
        self.body = body
        self.contentEncoding = contentEncoding
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.receivedAt = receivedAt
    }

    /// Whether it may still be delivered at `now`: a TTL of 0 is "now or never", and it is kept
    /// only while its subscriber is connected (``SubscriptionStore`` drops it on disconnect).
    func isLive(at now: Double) -> Bool { ttl == 0 || receivedAt + Double(ttl) > now }
}

/// A WebSocket text frame from the simulator to a subscriber (`GET /subscription/<id>/ws`):
/// `{"type":"hello","subscriptionId":…}` once the connection is registered (pushes from then on
/// reach it at once), then `{"type":"message","subscriptionId":…,"message":{…}}` per push message,
/// kept ones first.
package struct SubscriberFrame: Codable, Sendable, Equatable {
    package enum Kind: String, Codable, Sendable { case hello, message, expired }

    package let type: Kind
    package let subscriptionId: String
    package let message: PushMessage?

    package init(type: Kind, subscriptionId: String, message: PushMessage? = nil) {
        self.type = type
        self.subscriptionId = subscriptionId
        self.message = message
    }
}
