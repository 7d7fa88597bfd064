import Foundation
public import RichPushCore

/// One request to APNs, checked against Apple's rules before it is ever sent: `POST
/// /3/device/<token>` with the headers Apple documents and the JSON payload.
public struct APNSRequest: Sendable, Hashable {
    public struct Header: Sendable, Hashable {
        public let name: String
        public let value: String
    }

    public let path: String
    /// In the order they are sent; `authorization` is added per connection, not here.
    public let headers: [Header]
    public let body: [UInt8]
    public let apnsID: String

    /// Push types this adapter sends and what Apple requires of each.
    public static let pushTypes: Set<String> = ["alert", "background"]
    public static let maxPayloadBytes = 4096
    public static let maxCollapseIDBytes = 64

    /// Builds the request for `push` to `topic` (the app's bundle id), or says why APNs would
    /// refuse it: such a push fails for good and is never sent.
    public init(push: OutgoingPush, topic: String) throws(APNSRejection) {
        let token = push.installation.handle
        guard (16...200).contains(token.utf8.count), token.utf8.count % 2 == 0, Hex.isDigits(token) else {
            throw APNSRejection(.badDeviceToken, "the device token must be an even number (16 to 200) of hex digits, got \(token.utf8.count) characters")
        }
        guard !topic.isEmpty, topic.utf8.count <= 255, !topic.contains(where: \.isWhitespace) else {
            throw APNSRejection(.missingTopic, "the APNs topic (the app's bundle id) is empty or malformed")
        }
        let rendered = push.rendered
        guard Self.pushTypes.contains(rendered.pushType) else {
            throw APNSRejection(.invalidPushType, "push type '\(rendered.pushType)' is not one this adapter sends (alert, background)")
        }
        if rendered.pushType == "background" && rendered.priority != 5 {
            throw APNSRejection(.badPriority, "a background push must have priority 5, not \(rendered.priority)")
        }
        guard [5, 10].contains(rendered.priority) else {
            throw APNSRejection(.badPriority, "apns-priority must be 5 or 10, not \(rendered.priority)")
        }
        guard rendered.expiration >= 0 else { throw APNSRejection(.badExpirationDate, "apns-expiration must not be negative") }
        guard !rendered.collapseID.isEmpty, rendered.collapseID.utf8.count <= Self.maxCollapseIDBytes else {
            throw APNSRejection(.badCollapseID, "apns-collapse-id must be 1 to \(Self.maxCollapseIDBytes) bytes, got \(rendered.collapseID.utf8.count)")
        }
        try APNSPayloadCheck.check(rendered.payload, pushType: rendered.pushType)
        apnsID = APNSID.make(notification: push.notification, installation: push.installation.id)
        path = "/3/device/\(token)"
        headers = [
            Header(name: "apns-push-type", value: rendered.pushType),
            Header(name: "apns-topic", value: topic),
            Header(name: "apns-priority", value: String(rendered.priority)),
            Header(name: "apns-expiration", value: String(rendered.expiration)),
            Header(name: "apns-collapse-id", value: rendered.collapseID),
            Header(name: "apns-id", value: apnsID),
            Header(name: "content-type", value: "application/json"),
        ]
        body = rendered.payload
    }
}
