/// A rich notification as stored: the seed's `Notification { Id, Message, RichType, Payload, Read }`
/// with the payload kept apart, by content hash.
package struct RichNotification: Sendable, Hashable, Codable {
    /// Decimal integer from `INCR` (the device parses `richId` with `intValue`).
    package var id: Int
    package var message: String
    package var richType: RichType
    /// The payload's media type (`image/png`, `text/uri-list`, ...).
    package var contentType: String
    /// SHA-256 of the payload, hex; the payload is stored once per hash.
    package var payloadHash: String
    package var payloadSize: Int
    /// Who created it.
    package var creator: String
    /// The tag expression it is sent to.
    package var target: String
    /// Milliseconds since 1970.
    package var createdAt: Int64
    /// The sender's ttl, collapse id and priority.
    package var delivery: DeliveryOptions
    /// A template send's properties (nil: a plain rich push): devices with templates get them
    /// rendered with these, the others today's payload.
    package var properties: SendProperties?
    /// A native send (NH's `apple`, `fcmv1`, `browser`): sent as written to that format's devices
    /// alone (nil: rendered by RichPush).
    package var native: NativePush?
    /// NH's template send: only devices with a template for it get it (NH sends a template
    /// notification to template registrations alone); false: the others get the plain push.
    package var templatesOnly = false

    package init(
        id: Int, message: String, richType: RichType, contentType: String, payloadHash: String, payloadSize: Int, creator: String,
        target: String,
        createdAt: Int64, delivery: DeliveryOptions = DeliveryOptions(), properties: SendProperties? = nil, native: NativePush? = nil
    ) {
        self.delivery = delivery
        self.properties = properties
        self.native = native
        self.id = id
        self.message = message
        self.richType = richType
        self.contentType = contentType
        self.payloadHash = payloadHash
        self.payloadSize = payloadSize
        self.creator = creator
        self.target = target
        self.createdAt = createdAt
    }

    /// The seed's default message.
    package static let defaultMessage = "Check this image out!"
    /// Longest message accepted, in characters.
    package static let maxMessageLength = 1024
}
