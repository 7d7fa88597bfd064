import Foundation
package import RichPushCore

extension FCMSimulator {
    /// A message FCM would have accepted, for whatever stands in for the device.
    package struct Accepted: Sendable {
        package let token: String
        /// The request body, `{"message":{…}}` (already checked by ``FCMMessageRules``).
        package let body: [UInt8]
        /// The `name` FCM answered with (`projects/…/messages/0:N`).
        package let name: String
        /// When FCM accepted it, in milliseconds since 1970 (its `android.ttl` counts from then).
        package let acceptedAt: Int64

        init(token: String, body: [UInt8], name: String) {
            self.token = token
            self.body = body
            self.name = name
            acceptedAt = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        }

        /// The message as the simulated hub carries it to the device: the v1 `message` object
        /// (the Android app reads its `data`), held for an offline device as FCM holds it: by its
        /// `android.collapse_key` (none: a message of its own), for its `android.ttl` (FCM
        /// counts whole seconds, rounding a fraction down; 0 is "now or never"), within FCM's
        /// limits per device (the hub applies them to every Android device: ``OfflineStore``).
        package var hubPush: OutgoingPush {
            let message = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["message"] as? [String: Any] ?? [:]
            let android = message["android"] as? [String: Any] ?? [:]
            let payload = (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])) ?? Data("{}".utf8)
            // No ttl: FCM's default, 4 weeks (the hub holds it no longer than its own hold time).
            let ttl = (android["ttl"] as? String).flatMap { Double($0.dropLast()) }.map { Int64($0.rounded(.down)) } ?? 28 * 86400
            return OutgoingPush(
                notification: 0,
                installation: Installation(id: token, platform: .fcm, handle: token, tags: [], owner: "", updatedAt: 0),
                rendered: RenderedPush(
                    payload: Array(payload), pushType: message["notification"] == nil ? "data" : "notification",
                    priority: (android["priority"] as? String)?.uppercased() == "HIGH" ? 10 : 5, expiration: 0,
                    collapseID: android["collapse_key"] as? String ?? "", deadline: acceptedAt + ttl * 1000))
        }
    }
}
