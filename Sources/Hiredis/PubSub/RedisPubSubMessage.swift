/// A message received on a subscribed channel (or on a channel matching a subscribed pattern).
package struct RedisPubSubMessage: Sendable, Hashable {
    package let channel: String
    /// The pattern that matched, for messages received through `PSUBSCRIBE`.
    package let pattern: String?
    package let payload: [UInt8]

    package init(channel: String, pattern: String? = nil, payload: [UInt8]) {
        self.channel = channel
        self.pattern = pattern
        self.payload = payload
    }
}
