import Crypto
import Foundation
import RichPushCore

/// Seals and opens one credential: `v1:<key id>:<base64 of nonce ‖ ciphertext ‖ tag>`, AES-256-GCM
/// with the app id and the field as associated data, so a sealed value moved to another app or
/// field does not open.
enum CredentialSealer {
    static func seal(_ plaintext: [UInt8], app: AppID, field: String, with key: KeyEncryptionKey) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: key.key, authenticating: associatedData(app: app, field: field))
        guard let combined = box.combined else { throw AppError.invalid(field: field, "could not be sealed") }
        return "v1:\(key.id):\(combined.base64EncodedString())"
    }

    /// The id of the key that sealed `sealed`, or nil when it is not a sealed value.
    static func keyID(of sealed: String) -> String? {
        let parts = sealed.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "v1" ? String(parts[1]) : nil
    }

    static func open(_ sealed: String, app: AppID, field: String, ring: KeyRing?) throws(AppError) -> [UInt8] {
        let parts = sealed.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let combined = Data(base64Encoded: String(parts[2])) else {
            throw AppError.unreadable(app: app, field: field)
        }
        guard let ring else { throw AppError.noKeyEncryptionKey }
        guard let key = ring.key(id: String(parts[1])) else { throw AppError.unknownKeyEncryptionKey(id: String(parts[1])) }
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            return Array(try AES.GCM.open(box, using: key.key, authenticating: associatedData(app: app, field: field)))
        } catch {
            throw AppError.unreadable(app: app, field: field)
        }
    }

    private static func associatedData(app: AppID, field: String) -> [UInt8] { Array("richpush-app:\(app.rawValue):\(field)".utf8) }
}
