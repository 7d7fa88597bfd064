import Foundation

/// The checks FCM HTTP v1 makes of a `messages:send` body (the v1 `Message` schema; see
/// docs/fcm-v1-notes.md), so that what the simulator accepts FCM would accept.
package enum FCMMessageRules {
    package static let maxBodyBytes = 64 * 1024
    static let reservedDataKeys: Set<String> = ["from", "message_type"]
    static let messageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions",
        "token", "topic", "condition",
    ]
    static let androidFields: Set<String> = [
        "collapse_key", "collapseKey", "priority", "ttl", "restricted_package_name", "restrictedPackageName",
        "data", "notification", "fcm_options", "fcmOptions", "direct_boot_ok", "directBootOk",
    ]

    /// The device token the message is for, or the INVALID_ARGUMENT message.
    package static func check(_ body: [UInt8]) -> Result<(token: String, validateOnly: Bool), FCMSimError> {
        func invalid(_ text: String) -> Result<(token: String, validateOnly: Bool), FCMSimError> {
            .failure(FCMSimError(400, "INVALID_ARGUMENT", text, fcm: "INVALID_ARGUMENT"))
        }
        guard body.count <= maxBodyBytes else { return invalid("Request payload size exceeds the limit") }
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return invalid("Invalid JSON payload received.")
        }
        if let unknown = root.keys.first(where: { $0 != "message" && $0 != "validate_only" && $0 != "validateOnly" }) {
            return invalid("Invalid JSON payload received. Unknown name \"\(unknown)\": Cannot find field.")
        }
        let validateOnly = (root["validate_only"] ?? root["validateOnly"]) as? Bool ?? false
        guard let message = root["message"] as? [String: Any] else { return invalid("Request contains an invalid argument: no message") }
        if let unknown = message.keys.first(where: { !messageFields.contains($0) }) {
            return invalid("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else { return invalid("Exactly one of token, topic or condition must be set, not \(targets.count)") }
        guard let token = message["token"] as? String else { return invalid("This simulator delivers to device tokens only") }
        guard !token.isEmpty, token.utf8.count <= 4096 else {
            return invalid("The registration token is not a valid FCM registration token")
        }
        if let data = message["data"] {
            guard let data = data as? [String: Any] else { return invalid("Invalid value at 'message.data'") }
            var bytes = 0
            for (key, value) in data {
                guard let text = value as? String else { return invalid("Invalid value at 'message.data[\(key)]' (TYPE_STRING)") }
                if reservedDataKeys.contains(key) || key.hasPrefix("google.") || key.hasPrefix("gcm.notification.") {
                    return invalid("Invalid data payload key: \(key)")
                }
                bytes += key.utf8.count + text.utf8.count
            }
            guard bytes <= 4096 else { return invalid("Message is too big (data payload \(bytes) bytes; at most 4096)") }
        }
        if let android = message["android"] {
            guard let android = android as? [String: Any] else { return invalid("Invalid value at 'message.android'") }
            if let unknown = android.keys.first(where: { !androidFields.contains($0) }) {
                return invalid("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.android': Cannot find field.")
            }
            if let priority = android["priority"] {
                guard let text = priority as? String, ["HIGH", "NORMAL"].contains(text.uppercased()) else {
                    return invalid("Invalid value at 'message.android.priority'")
                }
            }
            if let ttl = android["ttl"] {
                guard let text = ttl as? String, let seconds = durationSeconds(text), seconds <= 2_419_200 else {
                    return invalid("Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration)")
                }
            }
            if let key = android["collapse_key"] ?? android["collapseKey"], !(key is String) {
                return invalid("Invalid value at 'message.android.collapse_key'")
            }
            if let notification = android["notification"],
                let problem = stringFields(notification, at: "message.android.notification", allowed: androidNotificationFields)
            {
                return invalid(problem)
            }
        }
        if let notification = message["notification"],
            let problem = stringFields(notification, at: "message.notification", allowed: ["title", "body", "image"])
        {
            return invalid(problem)
        }
        return .success((token, validateOnly))
    }

    /// The string fields of `AndroidNotification` (its lists, numbers and objects are not ours to send).
    static let androidNotificationFields: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "clickAction", "body_loc_key", "bodyLocKey",
        "title_loc_key", "titleLocKey", "channel_id", "channelId", "ticker", "image", "visibility", "notification_priority",
        "notificationPriority",
    ]

    /// Why `value` is not an object of string fields named in `allowed`, or nil.
    static func stringFields(_ value: Any, at path: String, allowed: Set<String>) -> String? {
        guard let object = value as? [String: Any] else { return "Invalid value at '\(path)'" }
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            return "Invalid JSON payload received. Unknown name \"\(unknown)\" at '\(path)': Cannot find field."
        }
        if let (key, _) = object.first(where: { !($0.value is String) }) { return "Invalid value at '\(path).\(key)' (TYPE_STRING)" }
        return nil
    }

    /// `"3.5s"`: seconds with up to nine fractional digits.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let pieces = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), !pieces[0].isEmpty, pieces[0].allSatisfy(\.isASCII), pieces[0].allSatisfy(\.isNumber),
            pieces.count == 1 || ((1...9).contains(pieces[1].count) && pieces[1].allSatisfy { $0.isASCII && $0.isNumber })
        else { return nil }
        return Double(number)
    }
}

/// An FCM error answer: HTTP status, `google.rpc.Status` status, message, and the `FcmError` code.
package struct FCMSimError: Error, Sendable, Hashable {
    package let status: Int
    package let rpcStatus: String
    package let message: String
    package let fcm: String?
    /// A `google.rpc.QuotaFailure` violation's subject and description (FCM adds one to
    /// `QUOTA_EXCEEDED`, saying whether the project's or a device's rate was exceeded).
    package let quotaViolation: (subject: String, description: String)?

    package init(
        _ status: Int, _ rpcStatus: String, _ message: String, fcm: String?, quotaViolation: (subject: String, description: String)? = nil
    ) {
        self.status = status
        self.rpcStatus = rpcStatus
        self.message = message
        self.fcm = fcm
        self.quotaViolation = quotaViolation
    }

    package static func == (lhs: FCMSimError, rhs: FCMSimError) -> Bool {
        lhs.status == rhs.status && lhs.rpcStatus == rhs.rpcStatus && lhs.message == rhs.message && lhs.fcm == rhs.fcm
            && lhs.quotaViolation?.subject == rhs.quotaViolation?.subject
            && lhs.quotaViolation?.description == rhs.quotaViolation?.description
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(message)
    }

    package var body: [UInt8] {
        var error: [String: Any] = ["code": status, "message": message, "status": rpcStatus]
        var details: [[String: Any]] = []
        if let fcm { details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm]) }
        if let quotaViolation {
            details.append([
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [["subject": quotaViolation.subject, "description": quotaViolation.description]],
            ])
        }
        if !details.isEmpty { error["details"] = details }
        return Array((try? JSONSerialization.data(withJSONObject: ["error": error], options: [.sortedKeys])) ?? Data())
    }
}
