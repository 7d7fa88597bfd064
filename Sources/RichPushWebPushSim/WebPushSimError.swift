import Foundation

/// A push service's refusal: the HTTP status, Mozilla autopush's `errno` (its documented error
/// numbers, so a client written against autopush reads ours the same way) and a message naming
/// the problem and the RFC section that makes it one.
package struct WebPushSimError: Error, Sendable, Equatable {
    /// A short, stable name of the problem (`missing_ttl`, `vapid_bad_signature`): what the
    /// request log's `reason` field holds.
    package struct Reason: Hashable, Sendable, CustomStringConvertible {
        package let name: String
        package var description: String { name }

        package static let unknownSubscription = Reason(name: "unknown_subscription")
        package static let expiredSubscription = Reason(name: "expired_subscription")
        package static let missingTTL = Reason(name: "missing_ttl")
        package static let invalidTTL = Reason(name: "invalid_ttl")
        package static let invalidUrgency = Reason(name: "invalid_urgency")
        package static let invalidTopic = Reason(name: "invalid_topic")
        package static let invalidEncoding = Reason(name: "invalid_content_encoding")
        package static let invalidHeader = Reason(name: "invalid_aes128gcm_header")
        package static let tooLarge = Reason(name: "payload_too_large")
        package static let missingAuthorization = Reason(name: "vapid_missing")
        package static let invalidAuthorization = Reason(name: "vapid_invalid")
        package static let badSignature = Reason(name: "vapid_bad_signature")
        package static let wrongAudience = Reason(name: "vapid_wrong_aud")
        package static let badExpiry = Reason(name: "vapid_bad_exp")
        package static let badSubject = Reason(name: "vapid_bad_sub")
        package static let keyMismatch = Reason(name: "vapid_key_mismatch")
        package static let invalidSubscribeRequest = Reason(name: "invalid_subscribe_request")
        package static let storageFull = Reason(name: "storage_full")
        package static let injected = Reason(name: "injected_fault")
        package static let subscriptionRate = Reason(name: "subscription_rate")
        package static let insideRetryAfter = Reason(name: "inside_retry_after")
    }

    package let status: Int
    package let errno: Int?
    package let reason: Reason
    package let message: String
    /// Seconds, for 429 and 503.
    package var retryAfter: Int?

    package init(_ status: Int, errno: Int?, _ reason: Reason, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.errno = errno
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
    }

    /// autopush's error body (`code`, `errno`, `error`, `message`) plus `reason`.
    package var body: [UInt8] {
        var object: [String: Any] = ["code": status, "error": Self.phrase(status), "message": message, "reason": reason.name]
        object["errno"] = errno ?? NSNull()
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }
}
