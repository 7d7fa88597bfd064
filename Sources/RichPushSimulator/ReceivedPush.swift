import RichPushCore

/// A push as the device reads it off its channel: the hub's envelope around the platform payload.
/// The payload's keys are read as the tutorial's app reads `userInfo` (iOS: top-level keys beside
/// `aps`) or as its Android twin reads `RemoteMessage.getData()` (the FCM message's `data`): a key
/// of the wrong type is absent (so a numeric `richId` is reported as "not an integer", not as
/// unreadable JSON).
struct ReceivedPush {
    /// The hub's id: the push's collapse id and its installation.
    var id: String?
    var sentAt: Int?
    /// The hub's `pushType`: APNs' `apns-push-type` (`background`, `alert`) or FCM's message
    /// kind (`data`, `notification`).
    var pushType: String?
    var payload: Payload

    struct Payload {
        /// Keys beside `aps`, where the iOS app reads them.
        var topLevel: RichKeys
        /// An FCM message's data (every value a string), where the Android app reads them.
        var data: RichKeys?
        /// `aps.mutable-content` is 1: iOS runs the notification service extension.
        var mutableContent = false
        /// FCM's `android.priority` is `HIGH` (or absent: HIGH is FCM's default for data messages).
        var androidHighPriority = true

        /// The rich keys as the app on `platform` reads them; nil when the push has no place for
        /// them on that platform (an FCM message without `data`).
        func keys(for platform: Platform) -> RichKeys? {
            platform == .fcm ? data : topLevel
        }
    }

    struct RichKeys {
        var richId: String?
        var richType: String?
        var richMessage: String?
        /// Where an alert's notification service extension fetches the payload (alert mode).
        var richUrl: String?

        /// The keys of an object; a key that is not a string is absent. Nil when not an object.
        init?(_ object: JSONValue) {
            guard case .object = object else { return nil }
            richId = object["richId"]?.string
            richType = object["richType"]?.string
            richMessage = object["richMessage"]?.string
            richUrl = object["richUrl"]?.string
        }
    }

    /// The envelope as the hub writes it, read with ``JSONValue`` (JSONDecoder was 38 % of the
    /// simulator's CPU under a fan-out); nil when it is not JSON or has no `payload` object.
    init?(json bytes: [UInt8]) {
        guard let envelope = JSONValue.parse(bytes), let payload = envelope["payload"], let topLevel = RichKeys(payload) else { return nil }
        id = envelope["id"]?.string
        sentAt = envelope["sentAt"]?.int
        pushType = envelope["pushType"]?.string
        self.payload = Payload(topLevel: topLevel, data: payload["data"].flatMap(RichKeys.init))
        self.payload.mutableContent = payload["aps"]?["mutable-content"]?.int == 1
        if let priority = payload["android"]?["priority"]?.string { self.payload.androidHighPriority = priority.uppercased() == "HIGH" }
    }
}
