package import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs use it: APNs provider tokens and the OAuth2
/// assertions of service accounts.
package enum Base64URL {
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// nil for an empty part, padding, or characters outside the alphabet.
    package static func decode(_ part: some StringProtocol) -> Data? {
        guard !part.isEmpty, part.utf8.allSatisfy({ $0 != UInt8(ascii: "=") }) else { return nil }
        var text = String(part).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
