/// A push ready for a platform: the payload bytes and the request metadata APNs wants.
package struct RenderedPush: Sendable, Hashable {
    package var payload: [UInt8]
    /// `apns-push-type`: `background` for silent pushes, `alert` for the extension mode.
    package var pushType: String
    /// `apns-priority`: 5 for background pushes (Apple requires it), 10 for alerts.
    package var priority: Int
    /// `apns-expiration`, seconds since 1970 (0: deliver once or never): ``deadline`` rounded up,
    /// so a platform never gives up before it.
    package var expiration: Int
    /// Until when the push may be delivered, in milliseconds since 1970: the notification's
    /// creation plus its ttl, exactly (the simulated hub holds it until then, never later or
    /// earlier); 0 when `expiration` is 0.
    package var deadline: Int64
    /// `apns-collapse-id`: the sender's collapse id, else the notification id, so a resend
    /// (replay, or after a worker died between send and record) replaces what the device shows
    /// rather than repeats it. Empty for an FCM message without a sender's collapse id: FCM keeps
    /// only 4 collapse keys per offline device, so such a message carries none.
    package var collapseID: String
    /// Web Push's `Urgency` when a template's `Headers` set it (nil: from ``priority``).
    package var urgency: String?

    /// `deadline` defaults to `expiration` in milliseconds.
    package init(payload: [UInt8], pushType: String, priority: Int, expiration: Int, collapseID: String, deadline: Int64? = nil) {
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.deadline = deadline ?? Int64(expiration) * 1000
        self.collapseID = collapseID
    }
}

/// Why a notification could not be rendered; never worth a retry.
package struct RenderError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}
