public import RichPushCore

/// The FCM HTTP v1 request body for one notification, in the rich-push pattern's Android form: a
/// high-priority data message carrying `richId`, `richType` and `richMessage`, which wakes the
/// app to fetch the payload and post its own notification with a "More" action. Rendered once
/// per notification; ``body(token:)`` adds the device's registration token.
public struct FCMMessage: Sendable, Hashable {
    /// Everything in `message` but the token, as a JSON object (`{"android":{…},"data":{…}}`).
    public let rest: [UInt8]

    /// FCM's limit on a data message's payload (the `data` keys and values).
    public static let maxDataBytes = 4096
    /// FCM keeps an undelivered message at most 28 days.
    public static let maxTimeToLive: Duration = .seconds(28 * 86400)
    /// `collapse_key` is the notification id, so a resend replaces rather than repeats.
    public static let maxCollapseKeyBytes = 64

    public init(notification: RichNotification, collapseKey: String, timeToLive: Duration) throws(FCMRejection) {
        let data = [("richId", String(notification.id)), ("richMessage", notification.message), ("richType", notification.richType.rawValue)]
        let dataBytes = data.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        guard dataBytes <= Self.maxDataBytes else {
            throw FCMRejection(.invalidArgument, "the data payload of notification \(notification.id) is \(dataBytes) bytes; FCM accepts at most \(Self.maxDataBytes) (shorten the message)")
        }
        guard !collapseKey.isEmpty, collapseKey.utf8.count <= Self.maxCollapseKeyBytes else {
            throw FCMRejection(.invalidArgument, "collapse_key must be 1 to \(Self.maxCollapseKeyBytes) bytes")
        }
        let seconds = timeToLive.components.seconds
        guard seconds >= 0, timeToLive <= Self.maxTimeToLive else {
            throw FCMRejection(.invalidArgument, "ttl must be 0 to 28 days, not \(seconds) s")
        }
        var json = JSONWriter(capacity: 160 + notification.message.utf8.count)
        json.beginObject()
        json.key("android")
        json.beginObject()
        json.field("collapse_key", collapseKey)
        // HIGH: a data message that must wake the app now (FCM may deprioritize it if the app
        // shows nothing in response; the pattern always posts a notification).
        json.field("priority", "HIGH")
        json.field("ttl", "\(seconds)s")
        json.endObject()
        json.key("data")
        json.beginObject()
        for (name, value) in data { json.field(name, value) }
        json.endObject()
        json.endObject()
        rest = json.bytes
    }

    /// A rendering made earlier (a push's `RenderedPush.payload`); it must be a JSON object.
    public init(rest: [UInt8]) throws(FCMRejection) {
        guard rest.count >= 2, rest.first == UInt8(ascii: "{"), rest.last == UInt8(ascii: "}") else {
            throw FCMRejection(.invalidArgument, "the rendering is not an FCM message object")
        }
        self.rest = rest
    }

    /// `{"message":{"token":…,"android":…,"data":…}}` for one device.
    public func body(token: String) throws(FCMRejection) -> [UInt8] {
        guard Self.isRegistrationToken(token) else {
            throw FCMRejection(.invalidArgument, "the registration token must be 1 to 4096 characters of [A-Za-z0-9_:.-], got \(token.utf8.count) characters")
        }
        var json = JSONWriter(capacity: rest.count + token.utf8.count + 32)
        json.beginObject()
        json.key("message")
        json.beginObject()
        json.field("token", token)
        // The members of `rest`, after the token.
        json.raw(Array(rest.dropFirst().dropLast()))
        json.endObject()
        json.endObject()
        return json.bytes
    }

    static func isRegistrationToken(_ token: String) -> Bool {
        (1...4096).contains(token.utf8.count) && token.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }
}

/// Why FCM refuses (or would refuse) a message: its error code and our explanation.
public struct FCMRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, RawRepresentable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let invalidArgument = Code(rawValue: "INVALID_ARGUMENT")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
