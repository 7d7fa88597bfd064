import Crypto
import Foundation
import RichPushAPNS
import RichPushCore
package import RichPushFCM
import RichPushWebPush

/// An app's APNs token-auth credentials: the `.p8` key with its key id, the team id, and the bundle
/// id pushes are sent for (apns-topic). One key serves both Apple environments.
package struct APNSCredential: Sendable, Hashable, Codable {
    package var keyPEM: String
    package var keyID: String
    package var teamID: String
    package var bundleID: String

    /// Checks every field; the error names the field, never the key's text.
    package init(keyPEM: String, keyID: String, teamID: String, bundleID: String) throws(AppError) {
        guard keyPEM.utf8.count <= 4096 else {
            throw AppError.invalid(field: "apns.key", "a .p8 key is a few hundred bytes, got \(keyPEM.utf8.count)")
        }
        do {
            _ = try APNSSigningKey(pem: keyPEM, keyID: keyID, teamID: teamID)
        } catch {
            throw AppError.invalid(field: "apns", error.description)
        }
        if let problem = Self.bundleIDProblem(bundleID) { throw AppError.invalid(field: "apns.bundleId", problem) }
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.bundleID = bundleID
    }

    /// Apple's rule for a bundle id: letters, digits, `-` and `.`, as reverse DNS (`com.example.app`).
    static func bundleIDProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...155).contains(bytes.count) else { return "a bundle id is 1 to 155 characters" }
        guard
            bytes.allSatisfy({
                (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E
            })
        else {
            return "a bundle id has only letters, digits, '-' and '.' (no spaces)"
        }
        guard bytes.first != 0x2E, bytes.last != 0x2E, !text.contains("..") else {
            return "a bundle id is reverse DNS, like com.example.app"
        }
        return nil
    }

    /// What may be shown: the ids and a fingerprint of the public key.
    package var summary: [String: String] {
        let publicKey = (try? P256.Signing.PrivateKey(pemRepresentation: keyPEM))?.publicKey.derRepresentation ?? Data()
        return ["keyId": keyID, "teamId": teamID, "bundleId": bundleID, "keyFingerprint": Fingerprint.of(publicKey)]
    }
}

/// An app's FCM HTTP v1 credentials: a Google service-account JSON with its private key.
package struct FCMCredential: Sendable, Hashable, Codable {
    package var serviceAccountJSON: String

    package init(serviceAccountJSON: String) throws(AppError) {
        do {
            _ = try FCMServiceAccount(json: Array(serviceAccountJSON.utf8))
        } catch {
            throw AppError.invalid(field: "fcm.serviceAccount", error.description)
        }
        self.serviceAccountJSON = serviceAccountJSON
    }

    package var account: FCMServiceAccount? { try? FCMServiceAccount(json: Array(serviceAccountJSON.utf8)) }

    /// What may be shown: the project, the account, and a fingerprint of its public key.
    package var summary: [String: String] {
        guard let account else { return [:] }
        return [
            "projectId": account.projectID, "clientEmail": account.clientEmail,
            "keyFingerprint": Fingerprint.of(Data(account.publicKeyPEM.utf8)),
        ]
    }
}

/// An app's Web Push identity (VAPID, RFC 8292): a P-256 key pair and the contact (`mailto:` or
/// `https:`) push services may use to reach the sender. Its public key is what browsers are
/// given as `applicationServerKey`, so it is shown in full.
package struct WebPushCredential: Sendable, Hashable, Codable {
    /// The private scalar, 32 bytes, base64url.
    package var privateKey: String
    /// Empty until set; push services may refuse a VAPID token without one (Apple's does).
    package var subject: String

    /// A new key pair.
    package static func generate(subject: String) throws(AppError) -> WebPushCredential {
        try WebPushCredential(privateKey: Base64URL.encode(P256.Signing.PrivateKey().rawRepresentation), subject: subject)
    }

    /// `privateKey`: base64url of the 32-byte scalar, or a PEM P-256 private key.
    package init(privateKey: String, subject: String) throws(AppError) {
        guard privateKey.utf8.count <= 4096 else { throw AppError.invalid(field: "webPush.privateKey", "too long for a P-256 key") }
        let key: P256.Signing.PrivateKey
        if privateKey.contains("-----BEGIN") {
            guard let parsed = try? P256.Signing.PrivateKey(pemRepresentation: privateKey) else {
                throw AppError.invalid(field: "webPush.privateKey", "not a PEM-encoded P-256 private key")
            }
            key = parsed
        } else {
            guard let raw = Base64URL.decode(privateKey), raw.count == 32, let parsed = try? P256.Signing.PrivateKey(rawRepresentation: raw)
            else {
                throw AppError.invalid(field: "webPush.privateKey", "not a P-256 private key (32 bytes base64url, or PEM)")
            }
            key = parsed
        }
        // Empty until set; once set, what the VAPID signer will take.
        if !subject.isEmpty, let problem = VAPIDSigner.subjectProblem(subject) { throw AppError.invalid(field: "webPush.subject", problem) }
        self.privateKey = Base64URL.encode(key.rawRepresentation)
        self.subject = subject
    }

    /// The uncompressed public point (65 bytes), base64url: the browser's `applicationServerKey`.
    package var publicKey: String {
        guard let raw = Base64URL.decode(privateKey), let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) else { return "" }
        return Base64URL.encode(key.publicKey.x963Representation)
    }

    package var summary: [String: String] { subject.isEmpty ? ["publicKey": publicKey] : ["subject": subject, "publicKey": publicKey] }
}

/// `SHA256:` and the first 16 hex digits of the SHA-256 of a public key: enough to tell keys apart,
/// nothing to sign with.
enum Fingerprint {
    static func of(_ bytes: Data) -> String {
        "SHA256:" + Hex.encode(Array(SHA256.hash(data: bytes)).prefix(8))
    }
}
