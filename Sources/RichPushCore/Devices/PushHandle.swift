/// What a push handle (the platform's device address) may look like, checked at registration so a
/// handle the platform would refuse is refused at once, with a reason, not at every send.
package enum PushHandle {
    /// The longest handle we store. APNs device tokens are 64 hex digits today (Apple allows them
    /// to grow); FCM registration tokens are about 160 characters.
    package static let maxBytes = 512
    /// The longest Web Push endpoint we store: push services' URLs run to a few hundred bytes
    /// (Windows' carry a long token in the query).
    package static let maxEndpointBytes = 2048

    /// Why `handle` cannot be a push handle of `platform`, or nil when it can.
    package static func problem(with handle: String, platform: Platform) -> String? {
        let limit = platform == .webpush ? maxEndpointBytes : maxBytes
        guard (1...limit).contains(handle.utf8.count) else {
            return "a push handle is 1 to \(limit) bytes, got \(handle.utf8.count)"
        }
        switch platform {
        case .webpush:
            guard handle.hasPrefix("https://"), handle.utf8.count > 8, handle.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                return "a Web Push handle is the subscription's endpoint, an https URL"
            }
        case .fcm, .gcm:
            guard isRegistrationToken(handle) else {
                return "an FCM registration token is made of letters, digits and _ : . - only"
            }
        case .apns, .wns, .mpns:
            guard handle.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                return "a push handle is printable ASCII without spaces"
            }
        }
        return nil
    }

    /// FCM's registration-token alphabet: base64url plus `:` and `.` (`cXyz…:APA91b…`).
    package static func isRegistrationToken(_ token: String, maxBytes: Int = maxBytes) -> Bool {
        (1...maxBytes).contains(token.utf8.count)
            && token.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
    }
}
