import Foundation

/// A push service's refusal: the HTTP status, Mozilla autopush's `errno` (its documented error
/// numbers, so a client written against autopush reads ours the same way) and a message naming
/// the problem and the RFC section that makes it one.
public struct WebPushSimError: Error, Sendable, Equatable {
    /// A short, stable name of the problem (`missing_ttl`, `vapid_bad_signature`): what the
    /// request log's `reason` field holds.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public var description: String { name }

        public static let unknownSubscription = Reason(name: "unknown_subscription")
        public static let expiredSubscription = Reason(name: "expired_subscription")
        public static let missingTTL = Reason(name: "missing_ttl")
        public static let invalidTTL = Reason(name: "invalid_ttl")
        public static let invalidUrgency = Reason(name: "invalid_urgency")
        public static let invalidTopic = Reason(name: "invalid_topic")
        public static let invalidEncoding = Reason(name: "invalid_content_encoding")
        public static let invalidHeader = Reason(name: "invalid_aes128gcm_header")
        public static let tooLarge = Reason(name: "payload_too_large")
        public static let missingAuthorization = Reason(name: "vapid_missing")
        public static let invalidAuthorization = Reason(name: "vapid_invalid")
        public static let badSignature = Reason(name: "vapid_bad_signature")
        public static let wrongAudience = Reason(name: "vapid_wrong_aud")
        public static let badExpiry = Reason(name: "vapid_bad_exp")
        public static let badSubject = Reason(name: "vapid_bad_sub")
        public static let keyMismatch = Reason(name: "vapid_key_mismatch")
        public static let invalidSubscribeRequest = Reason(name: "invalid_subscribe_request")
        public static let storageFull = Reason(name: "storage_full")
        public static let injected = Reason(name: "injected_fault")
    }

    public let status: Int
    public let errno: Int?
    public let reason: Reason
    public let message: String
    /// Seconds, for 429 and 503.
    public var retryAfter: Int?

    public init(_ status: Int, errno: Int?, _ reason: Reason, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.errno = errno
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
    }

    /// autopush's error body (`code`, `errno`, `error`, `message`) plus `reason`.
    public var body: [UInt8] {
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
