/// Why APNs refuses (or would refuse) a push: Apple's reason, and our explanation.
package struct APNSRejection: Error, Sendable, Hashable, CustomStringConvertible {
    package let reason: APNSReason
    package let message: String

    package init(_ reason: APNSReason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { "\(reason.rawValue): \(message)" }
}

/// The `reason` strings of Apple's error responses ("Handling notification responses from
/// APNs": 32 reasons), plus RichPush's own `InvalidPayload`. An unknown reason is kept as its text.
package enum APNSReason: Hashable, Sendable {
    case badCollapseID, badDeviceToken, badExpirationDate, badMessageID, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken
    case missingTopic, payloadEmpty, topicDisallowed
    /// RichPush's own check, not one of Apple's reasons: the payload is not a JSON object with an
    /// `aps` dictionary fit for its push type (Apple documents no reason for it; it may drop it).
    case invalidPayload
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken
    case missingProviderToken, unrelatedKeyIDInToken, badEnvironmentKeyIDInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests, internalServerError, serviceUnavailable, shutdown
    case other(String)

    static let names: [(APNSReason, String)] = [
        (.badCollapseID, "BadCollapseId"), (.badDeviceToken, "BadDeviceToken"), (.badExpirationDate, "BadExpirationDate"),
        (.badMessageID, "BadMessageId"), (.badPriority, "BadPriority"), (.badTopic, "BadTopic"),
        (.deviceTokenNotForTopic, "DeviceTokenNotForTopic"), (.duplicateHeaders, "DuplicateHeaders"), (.idleTimeout, "IdleTimeout"),
        (.invalidPushType, "InvalidPushType"), (.missingDeviceToken, "MissingDeviceToken"), (.missingTopic, "MissingTopic"),
        (.payloadEmpty, "PayloadEmpty"), (.topicDisallowed, "TopicDisallowed"), (.invalidPayload, "InvalidPayload"),
        (.badCertificate, "BadCertificate"), (.badCertificateEnvironment, "BadCertificateEnvironment"),
        (.expiredProviderToken, "ExpiredProviderToken"), (.forbidden, "Forbidden"), (.invalidProviderToken, "InvalidProviderToken"),
        (.missingProviderToken, "MissingProviderToken"), (.unrelatedKeyIDInToken, "UnrelatedKeyIdInToken"),
        (.badEnvironmentKeyIDInToken, "BadEnvironmentKeyIdInToken"), (.badPath, "BadPath"), (.methodNotAllowed, "MethodNotAllowed"),
        (.expiredToken, "ExpiredToken"), (.unregistered, "Unregistered"), (.payloadTooLarge, "PayloadTooLarge"),
        (.tooManyProviderTokenUpdates, "TooManyProviderTokenUpdates"), (.tooManyRequests, "TooManyRequests"),
        (.internalServerError, "InternalServerError"), (.serviceUnavailable, "ServiceUnavailable"), (.shutdown, "Shutdown"),
    ]

    package init(rawValue: String) {
        self = Self.names.first { $0.1 == rawValue }?.0 ?? .other(rawValue)
    }

    package var rawValue: String {
        if case .other(let text) = self { return text }
        return Self.names.first { $0.0 == self }?.1 ?? "?"
    }
}
