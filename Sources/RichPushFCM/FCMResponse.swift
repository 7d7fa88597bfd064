import Foundation

/// What to do with FCM's answer to one `messages:send`.
package enum FCMAction: Sendable, Hashable {
    /// 200: accepted; FCM's message name (`projects/<project>/messages/<id>`).
    case sent(messageID: String)
    /// `UNREGISTERED` (404): the registration token is dead; remove the installation.
    case unregistered(reason: String)
    /// The access token was refused (401 without an `FcmError`): refresh it once, then try again.
    case refreshToken(reason: String)
    /// `QUOTA_EXCEEDED` (429): the project's rolling-minute quota (or the device's rate) is used
    /// up; the whole adapter slows down for `after` (FCM's `Retry-After`; without one, Firebase
    /// asks for at least a minute).
    case throttled(reason: String, after: Duration?)
    /// `QUOTA_EXCEEDED` for one device (its `google.rpc.QuotaFailure` names a device's message
    /// rate): only that device slows down, for `after` (without one, a minute).
    case deviceThrottled(reason: String, after: Duration?)
    /// `UNAVAILABLE` (503), `INTERNAL` (500) and other 5xx: try again later, with back-off.
    case retry(reason: String, after: Duration?)
    /// `INVALID_ARGUMENT` (400), `SENDER_ID_MISMATCH` (403), `THIRD_PARTY_AUTH_ERROR` (401) and
    /// other 4xx: this message can never succeed as it is.
    case permanent(reason: String)
}

/// Maps FCM HTTP v1's status and JSON body to an action. FCM's errors are `google.rpc.Status`
/// objects: `{"error": {"code", "message", "status", "details": [{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}`.
/// Never throws: a body that is not JSON keeps its text as the reason.
package enum FCMResponse {
    package static func action(status: Int, body: [UInt8], retryAfter: String? = nil) -> FCMAction {
        let parsed = (try? JSONSerialization.jsonObject(with: Data(body.prefix(64 * 1024)))) as? [String: Any]
        if status == 200 {
            return .sent(messageID: parsed?["name"] as? String ?? "")
        }
        let error = parsed?["error"] as? [String: Any]
        let details = error?["details"] as? [[String: Any]] ?? []
        let errorCode =
            details.first { ($0["@type"] as? String)?.hasSuffix("google.firebase.fcm.v1.FcmError") == true }?["errorCode"] as? String
        let text =
            errorCode ?? (error?["status"] as? String)
            ?? (body.isEmpty ? "HTTP \(status)" : String(decoding: body.prefix(200), as: UTF8.self))
        let reason = (error?["message"] as? String).map { "\(text): \($0.prefix(200))" } ?? text
        let after = retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds(max(0, min($0, 3600))) }
        switch (status, errorCode) {
        case (_, "UNREGISTERED"):
            return .unregistered(reason: reason)
        case (_, "QUOTA_EXCEEDED") where isDeviceQuota(details):
            return .deviceThrottled(reason: reason, after: after)
        case (_, "QUOTA_EXCEEDED"), (429, _):
            return .throttled(reason: reason, after: after)
        case (_, "UNAVAILABLE"), (_, "INTERNAL"):
            return .retry(reason: reason, after: after)
        case (_, "INVALID_ARGUMENT"), (_, "SENDER_ID_MISMATCH"), (_, "THIRD_PARTY_AUTH_ERROR"):
            return .permanent(reason: reason)
        case (401, _):
            return .refreshToken(reason: reason)
        case (500..<600, _):
            return .retry(reason: reason, after: after)
        default:
            return .permanent(reason: reason)
        }
    }

    /// Whether a 429's body holds the whole project (FCM's project quota, or a 429 that says no
    /// more), as opposed to one device's rate: what stops the rest of a batch.
    package static func holdsProject(status: Int, retryAfter: String?, body: [UInt8]) -> Bool {
        guard status == 429 else { return false }
        if case .throttled = action(status: status, body: body) { return true }
        return false
    }

    /// How long an answer asks to wait before the next message to its registration token (a 429
    /// `QUOTA_EXCEEDED` naming the device's rate: its `Retry-After`, else `wait`), or nil.
    package static func holdsDevice(status: Int, retryAfter: String?, body: [UInt8], wait: Duration) -> Duration? {
        guard status == 429 else { return nil }
        if case .deviceThrottled(_, let after) = action(status: status, body: body, retryAfter: retryAfter) { return after ?? wait }
        return nil
    }

    /// Whether an answer says the registration token is dead (404 `UNREGISTERED`).
    package static func isUnregistered(status: Int, body: [UInt8]) -> Bool {
        guard status == 404 else { return false }
        if case .unregistered = action(status: status, body: body) { return true }
        return false
    }

    /// A `google.rpc.QuotaFailure` detail whose violation is about a device ("Device message rate
    /// exceeded"), not the project or a topic.
    static func isDeviceQuota(_ details: [[String: Any]]) -> Bool {
        details.contains { detail in
            guard (detail["@type"] as? String)?.hasSuffix("google.rpc.QuotaFailure") == true else { return false }
            let violations = detail["violations"] as? [[String: Any]] ?? []
            return violations.contains { violation in
                [violation["subject"], violation["description"]].contains { ($0 as? String)?.lowercased().contains("device") == true }
            }
        }
    }
}
