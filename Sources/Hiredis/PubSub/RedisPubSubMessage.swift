/// A message received on a subscribed channel (or on a channel matching a subscribed pattern).
public struct RedisPubSubMessage: Sendable, Hashable {
    public let channel: String
    /// The pattern that matched, for messages received through `PSUBSCRIBE`.
    public let pattern: String?
    public let payload: [UInt8]

    public init(channel: String, pattern: String? = nil, payload: [UInt8]) {
        self.channel = channel
        self.pattern = pattern
        self.payload = payload
    }
}
