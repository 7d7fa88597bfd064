/// A rich notification as stored: the seed's `Notification { Id, Message, RichType, Payload, Read }`
/// with the payload kept apart, by content hash.
public struct RichNotification: Sendable, Hashable, Codable {
    /// Decimal integer from `INCR` (the device parses `richId` with `intValue`).
    public var id: Int
    public var message: String
    public var richType: RichType
    /// The payload's media type (`image/png`, `text/uri-list`, ...).
    public var contentType: String
    /// SHA-256 of the payload, hex; the payload is stored once per hash.
    public var payloadHash: String
    public var payloadSize: Int
    /// Who created it.
    public var creator: String
    /// The tag expression it is sent to.
    public var target: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    /// The sender's ttl, collapse id and priority.
    public var delivery: DeliveryOptions

    public init(id: Int, message: String, richType: RichType, contentType: String, payloadHash: String, payloadSize: Int, creator: String, target: String,
                createdAt: Int64, delivery: DeliveryOptions = DeliveryOptions()) {
        self.delivery = delivery
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
    public static let defaultMessage = "Check this image out!"
    /// Longest message accepted, in characters.
    public static let maxMessageLength = 1024
}
