import Foundation
package import RichPushCore

/// One request to APNs, checked against Apple's rules before it is ever sent: `POST
/// /3/device/<token>` with the headers Apple documents and the JSON payload.
package struct APNSRequest: Sendable, Hashable {
    package struct Header: Sendable, Hashable {
        package let name: String
        package let value: String
    }

    package let path: String
    /// In the order they are sent; `authorization` is added per connection, not here.
    package let headers: [Header]
    package let body: [UInt8]
    package let apnsID: String

    /// Push types this adapter sends and what Apple requires of each.
    package static let pushTypes: Set<String> = ["alert", "background"]
    package static let maxPayloadBytes = 4096
    package static let maxCollapseIDBytes = 64

    /// Builds the request for `push` to `topic` (the app's bundle id), or says why APNs would
    /// refuse it: such a push fails for good and is never sent.
    package init(push: OutgoingPush, topic: String) throws(APNSRejection) {
        self = try Template(rendered: push.rendered, topic: topic).request(for: push)
    }

    fileprivate init(path: String, headers: [Header], body: [UInt8], apnsID: String) {
        self.path = path
        self.headers = headers
        self.body = body
        self.apnsID = apnsID
    }

    /// What every push of one rendered notification shares, checked once: push type, priority,
    /// expiration, collapse id, topic and payload. A fan-out to thousands of devices parses the
    /// payload once, not per device.
    package struct Template: Sendable {
        package let rendered: RenderedPush
        let headers: [Header]

        package init(rendered: RenderedPush, topic: String) throws(APNSRejection) {
            guard !topic.isEmpty, topic.utf8.count <= 255, !topic.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) else {
                throw APNSRejection(.missingTopic, "the APNs topic (the app's bundle id) is empty or malformed")
            }
            guard APNSRequest.pushTypes.contains(rendered.pushType) else {
                throw APNSRejection(.invalidPushType, "push type '\(rendered.pushType)' is not one this adapter sends (alert, background)")
            }
            if rendered.pushType == "background" && rendered.priority != 5 {
                throw APNSRejection(.badPriority, "a background push must have priority 5, not \(rendered.priority)")
            }
            guard [5, 10].contains(rendered.priority) else {
                throw APNSRejection(.badPriority, "apns-priority must be 5 or 10, not \(rendered.priority)")
            }
            guard rendered.expiration >= 0 else { throw APNSRejection(.badExpirationDate, "apns-expiration must not be negative") }
            guard !rendered.collapseID.isEmpty, rendered.collapseID.utf8.count <= APNSRequest.maxCollapseIDBytes else {
                throw APNSRejection(
                    .badCollapseID,
                    "apns-collapse-id must be 1 to \(APNSRequest.maxCollapseIDBytes) bytes, got \(rendered.collapseID.utf8.count)")
            }
            try APNSPayloadCheck.check(rendered.payload, pushType: rendered.pushType)
            self.rendered = rendered
            headers = [
                Header(name: "apns-push-type", value: rendered.pushType),
                Header(name: "apns-topic", value: topic),
                Header(name: "apns-priority", value: String(rendered.priority)),
                Header(name: "apns-expiration", value: String(rendered.expiration)),
                Header(name: "apns-collapse-id", value: rendered.collapseID),
            ]
        }

        /// The request for one device: its token checked, its path and its `apns-id`.
        package func request(for push: OutgoingPush) throws(APNSRejection) -> APNSRequest {
            let token = push.installation.handle
            guard (16...200).contains(token.utf8.count), token.utf8.count % 2 == 0, Hex.isDigits(token) else {
                throw APNSRejection(
                    .badDeviceToken, "the device token must be an even number (16 to 200) of hex digits, got \(token.utf8.count) characters"
                )
            }
            let apnsID = APNSID.make(notification: push.notification, installation: push.installation.id)
            return APNSRequest(
                path: "/3/device/\(token)",
                headers: headers + [Header(name: "apns-id", value: apnsID), Header(name: "content-type", value: "application/json")],
                body: rendered.payload, apnsID: apnsID)
        }
    }
}
