/// Why a Web Push subscription, message or VAPID identity cannot be used; `message` says what to
/// fix and never holds a key or a secret.
package struct WebPushError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        package var description: String { name }

        /// A subscription field is malformed; `field` names it (`endpoint`, `keys.p256dh`, `keys.auth`).
        package static let invalidSubscription = Code(name: "invalidSubscription")
        /// The plaintext does not fit one 4,096-byte record (more than 3,993 bytes): a permanent failure.
        package static let payloadTooLarge = Code(name: "payloadTooLarge")
        /// An `aes128gcm` body whose header or record is not what RFC 8188 and RFC 8291 allow.
        package static let malformedBody = Code(name: "malformedBody")
        /// The body did not authenticate (wrong keys, or altered on the way).
        package static let decryptionFailed = Code(name: "decryptionFailed")
        /// The VAPID private key, subject or token lifetime cannot be used.
        package static let invalidVAPIDConfiguration = Code(name: "invalidVAPIDConfiguration")
        /// A cryptographic primitive failed where it should not (key generation, signing).
        package static let cryptoFailure = Code(name: "cryptoFailure")
    }

    package let code: Code
    /// For `invalidSubscription`: the field at fault, as the API names it.
    package let field: String?
    package let message: String

    package init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// `"keys.p256dh: must be …"` for a subscription field, the message otherwise.
    package var description: String { field.map { "\($0): \(message)" } ?? message }
}
