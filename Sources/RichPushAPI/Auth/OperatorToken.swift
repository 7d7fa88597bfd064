import Crypto
import Foundation
import RichPushCore

/// The deployment operator's credential for `/api/apps` (and later the console): a random token
/// of at least 32 characters from `richpush api --operator-token-file`, sent as
/// `Authorization: Bearer <token>`. Only its SHA-256 is kept, compared in constant time.
package struct OperatorToken: Sendable {
    private let digest: [UInt8]

    /// Nil with the reason when `text` (surrounding white space ignored) is too weak to be one.
    package static func problem(_ text: String) -> String? {
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (32...512).contains(token.utf8.count) else {
            return "an operator token is 32 to 512 characters (e.g. `openssl rand -base64 32`)"
        }
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return "an operator token is printable ASCII without spaces" }
        return nil
    }

    package init?(text: String) {
        guard Self.problem(text) == nil else { return nil }
        digest = Array(SHA256.hash(data: Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)))
    }

    func accepts(_ token: String) -> Bool {
        ConstantTime.equal(digest, Array(SHA256.hash(data: Array(token.utf8))))
    }
}
