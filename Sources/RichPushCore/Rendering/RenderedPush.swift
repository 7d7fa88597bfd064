/// A push ready for a platform: the payload bytes and the request metadata APNs wants.
public struct RenderedPush: Sendable, Hashable {
    public var payload: [UInt8]
    /// `apns-push-type`: `background` for silent pushes, `alert` for the extension mode.
    public var pushType: String
    /// `apns-priority`: 5 for background pushes (Apple requires it), 10 for alerts.
    public var priority: Int
    /// `apns-expiration`, seconds since 1970 (0: deliver once or never).
    public var expiration: Int
    /// `apns-collapse-id`: the notification id, so a resend (replay, or after a worker died
    /// between send and record) replaces what the device shows rather than repeats it.
    public var collapseID: String

    public init(payload: [UInt8], pushType: String, priority: Int, expiration: Int, collapseID: String) {
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
    }
}

/// Why a notification could not be rendered; never worth a retry.
public struct RenderError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
