import Foundation
public import RichPushCore

extension FCMSimulator {
    /// A message FCM would have accepted, for whatever stands in for the device.
    public struct Accepted: Sendable {
        public let token: String
        /// The request body, `{"message":{…}}` (already checked by ``FCMMessageRules``).
        public let body: [UInt8]
        /// The `name` FCM answered with (`projects/…/messages/0:N`).
        public let name: String

        /// The message as the simulated hub carries it to the device: the v1 `message` object
        /// (the Android app reads its `data`), collapsing by `android.collapse_key`.
        public var hubPush: OutgoingPush {
            let message = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["message"] as? [String: Any] ?? [:]
            let android = message["android"] as? [String: Any] ?? [:]
            let payload = (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])).map { Array($0) } ?? Array("{}".utf8)
            return OutgoingPush(
                notification: 0,
                installation: Installation(id: token, platform: .fcm, handle: token, tags: [], owner: "", updatedAt: 0),
                rendered: RenderedPush(payload: payload, pushType: message["notification"] == nil ? "data" : "notification",
                                       priority: (android["priority"] as? String)?.uppercased() == "HIGH" ? 10 : 5, expiration: 0,
                                       collapseID: android["collapse_key"] as? String ?? name))
        }
    }
}
