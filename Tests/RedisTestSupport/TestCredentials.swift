import Crypto
package import Foundation
import _CryptoExtras

/// Platform credentials of the shapes Apple and Google hand out, made fresh for a test: a `.p8`
/// (PKCS#8 P-256) key and a service-account JSON with a 2048-bit RSA key.
package enum TestCredentials {
    /// A P-256 private key in PEM, as Apple's `.p8` files hold one.
    package static func p8() -> String { P256.Signing.PrivateKey().pemRepresentation }

    /// A P-384 key: a valid PEM key that APNs does not take.
    package static func p384() -> String { P384.Signing.PrivateKey().pemRepresentation }

    /// A service-account JSON (its text) for `project`; `edit` may change or drop members.
    package static func serviceAccount(project: String = "richpush-apps", edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        var object: [String: Any] = [
            "type": "service_account", "project_id": project, "private_key_id": "k1",
            "private_key": key.pkcs8PEMRepresentation, "client_email": "fcm@\(project).iam.gserviceaccount.com",
            "token_uri": "https://oauth2.googleapis.com/token",
        ]
        edit(&object)
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A browser subscription's keys as `PushSubscription.toJSON()` gives them (base64url, no
    /// padding): a fresh P-256 public key (uncompressed) and a 16-byte auth secret; and the
    /// private key, for decrypting what is sent to it.
    package static func webPushKeys() -> (p256dh: String, auth: String, privateKey: Data) {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        return (base64url(key.publicKey.x963Representation), base64url(auth), key.rawRepresentation)
    }

    package static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }
}
