package import Crypto
package import Foundation
import RichPushCore

/// The provider token APNs takes in `authorization: bearer <token>`: an ES256 JWT signed with the
/// team's `.p8` key, with `kid` (the key id) in its header and `iss` (the team id) and `iat`
/// (seconds) in its claims. The signature is the raw 64-byte r‖s, base64url like the rest.
package struct APNSSigningKey: Sendable {
    package let keyID: String
    package let teamID: String
    /// The key's raw scalar (swift-crypto's key type is not Sendable); a key is rebuilt to sign,
    /// which happens once per token (every 20 to 50 minutes), not per push.
    private let rawKey: Data

    /// `pem`: the contents of the `.p8` file Apple's developer portal gives (PKCS#8, PEM).
    /// Key and team ids are 10 characters each (letters and digits).
    package init(pem: String, keyID: String, teamID: String) throws(APNSConfigurationError) {
        guard Self.isAppleID(keyID) else {
            throw APNSConfigurationError("the APNs key id must be 10 letters or digits, got '\(keyID.prefix(20))'")
        }
        guard Self.isAppleID(teamID) else {
            throw APNSConfigurationError("the APNs team id must be 10 letters or digits, got '\(teamID.prefix(20))'")
        }
        do {
            rawKey = try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation
        } catch {
            // Never the key's text: it is a secret.
            throw APNSConfigurationError("the APNs key is not a PEM-encoded P-256 private key (the .p8 file from Apple's developer portal)")
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// A token issued at `issuedAt` (APNs refuses tokens older than an hour).
    package func token(issuedAt: Date) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"iss":"\#(teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#.utf8))
        let signingInput = header + "." + claims
        let signature = try P256.Signing.PrivateKey(rawRepresentation: rawKey).signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// The public half, for a server that checks tokens (`richpush apns-sim`).
    package var publicKey: P256.Signing.PublicKey {
        // The scalar was valid when it was read.
        (try? P256.Signing.PrivateKey(rawRepresentation: rawKey))!.publicKey
    }

    static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}

/// A configuration the APNs adapter cannot work with; the message says what to fix.
package struct APNSConfigurationError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
