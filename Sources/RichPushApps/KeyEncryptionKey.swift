import Crypto
import Foundation
import RichPushCore

/// The key that seals app credentials at rest (AES-256-GCM): 32 random bytes, written as base64
/// in a file or an environment variable. Its id, derived from the key, is stored beside what it
/// sealed, so a process given the wrong key says so instead of reading garbage.
package struct KeyEncryptionKey: Sendable {
    package let id: String
    /// The key's bytes (swift-crypto's key type is not Sendable); a key is rebuilt per use.
    private let bytes: [UInt8]
    var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// A new random key.
    package static func generate() -> KeyEncryptionKey { KeyEncryptionKey(key: SymmetricKey(size: .bits256)) }

    /// Reads the base64 (or base64url) text of a key; surrounding white space is ignored.
    package init(text: String) throws(AppError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let standard = trimmed.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard trimmed.utf8.count <= 64, let bytes = Data(base64Encoded: padded), bytes.count == 32 else {
            throw AppError.invalid(field: "key-encryption key", "it must be 32 bytes in base64 (`richpush apps new-kek` makes one)")
        }
        self.init(key: SymmetricKey(data: bytes))
    }

    init(key: SymmetricKey) {
        bytes = key.withUnsafeBytes { Array($0) }
        let tag = HMAC<SHA256>.authenticationCode(for: Array("richpush key-encryption key id".utf8), using: key)
        id = Hex.encode(Array(tag).prefix(6))
    }

    /// The key's text, as `generate()` gives it to be stored in a file.
    package var text: String { Data(bytes).base64EncodedString() }
}

/// The key-encryption keys a process holds: the current one seals; it and the previous ones open
/// (a rotation gives the new key as current and the old one as previous until `richpush apps
/// rekey` has re-sealed everything).
package struct KeyRing: Sendable {
    package let current: KeyEncryptionKey
    package let previous: [KeyEncryptionKey]

    package init(current: KeyEncryptionKey, previous: [KeyEncryptionKey] = []) {
        self.current = current
        self.previous = previous.filter { $0.id != current.id }
    }

    func key(id: String) -> KeyEncryptionKey? { id == current.id ? current : previous.first { $0.id == id } }
}
