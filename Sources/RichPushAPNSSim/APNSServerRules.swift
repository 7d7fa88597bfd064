package import Foundation
package import RichPushAPNS
import RichPushCore

/// One request as `richpush apns-sim` receives it.
package struct APNSIncomingRequest: Sendable {
    package var method: String
    package var path: String
    /// In arrival order; names lowercase, as HTTP/2 sends them.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// Apple's answer to one request.
package enum APNSVerdict: Sendable, Hashable {
    case accepted(apnsID: String)
    case refused(status: Int, reason: APNSReason)
}

/// The checks Apple's servers make, in the order they are documented ("Sending notification
/// requests to APNs", "Handling notification responses from APNs"), so that what the simulator
/// accepts Apple would accept. One stricter choice, said where it is made: a payload that does
/// not fit its push type is refused with `InvalidPushType` where Apple may also drop it silently.
package struct APNSServerRules: Sendable {
    package let token: APNSProviderTokenCheck
    /// The bundle ids the team may push to.
    package let topics: Set<String>
    /// Device tokens of Apple's other service (a sandbox token, for a simulator standing in for
    /// production, and the reverse), lowercase: refused with 400 `BadDeviceToken`, as Apple
    /// refuses a token sent to the wrong service.
    package let otherEnvironmentTokens: Set<String>
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm",
        "liveactivity", "pushtotalk", "widgets", "controls",
    ]

    package init(token: APNSProviderTokenCheck, topics: Set<String>, otherEnvironmentTokens: Set<String> = []) {
        self.token = token
        self.topics = topics
        self.otherEnvironmentTokens = Set(otherEnvironmentTokens.map { $0.lowercased() })
    }

    package func verdict(_ request: APNSIncomingRequest, now: Date = Date()) -> APNSVerdict {
        guard request.method == "POST" else { return .refused(status: 405, reason: .methodNotAllowed) }
        guard request.path.hasPrefix("/3/device/") else { return .refused(status: 404, reason: .badPath) }
        let deviceToken = request.path.dropFirst("/3/device/".count)
        guard !deviceToken.isEmpty else { return .refused(status: 400, reason: .missingDeviceToken) }
        guard deviceToken.utf8.count % 2 == 0, Hex.isDigits(deviceToken) else { return .refused(status: 400, reason: .badDeviceToken) }
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            guard headers.updateValue(value, forKey: name.lowercased()) == nil else {
                return .refused(status: 400, reason: .duplicateHeaders)
            }
        }
        if let problem = token.problem(with: headers["authorization"], now: now) { return .refused(status: 403, reason: problem) }
        guard let topic = headers["apns-topic"], !topic.isEmpty else { return .refused(status: 400, reason: .missingTopic) }
        let pushType = headers["apns-push-type"] ?? "alert"
        guard Self.pushTypes.contains(pushType) else { return .refused(status: 400, reason: .invalidPushType) }
        guard topics.contains(topic) else { return .refused(status: 400, reason: .topicDisallowed) }
        let priority = headers["apns-priority"].map { Int($0) } ?? 10
        guard let priority, [1, 5, 10].contains(priority) else { return .refused(status: 400, reason: .badPriority) }
        // "Always use priority 5. Using priority 10 is an error."
        if pushType == "background" && priority == 10 { return .refused(status: 400, reason: .badPriority) }
        if let expiration = headers["apns-expiration"], Int(expiration) == nil { return .refused(status: 400, reason: .badExpirationDate) }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > 64 { return .refused(status: 400, reason: .badCollapseID) }
        if let id = headers["apns-id"], !Self.isCanonicalUUID(id) { return .refused(status: 400, reason: .badMessageID) }
        guard !request.body.isEmpty else { return .refused(status: 400, reason: .payloadEmpty) }
        guard request.body.count <= (pushType == "voip" ? 5120 : 4096) else { return .refused(status: 413, reason: .payloadTooLarge) }
        if pushType == "background" {
            // Stricter than Apple, which may drop these silently: a background push carries
            // content-available 1 (the integer) and nothing to show (one parse checks it all).
            do throws(APNSRejection) {
                try APNSPayloadCheck.check(request.body, pushType: "background")
            } catch {
                return .refused(status: 400, reason: .invalidPushType)
            }
        } else {
            guard let payload = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
                payload["aps"] is [String: Any]
            else { return .refused(status: 400, reason: .invalidPushType) }
        }
        // Well formed, but not a token this service issued.
        if otherEnvironmentTokens.contains(deviceToken.lowercased()) { return .refused(status: 400, reason: .badDeviceToken) }
        return .accepted(apnsID: headers["apns-id"] ?? UUID().uuidString.lowercased())
    }

    static func isCanonicalUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { Hex.isDigits($0) }
    }
}
