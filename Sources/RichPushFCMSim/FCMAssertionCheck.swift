import Crypto
package import Foundation
import RichPushCore
import _CryptoExtras

/// What Google's token endpoint checks of a service account's assertion (RFC 7523): an RS256 JWT
/// whose `kid` is the key's id, `iss` the client email, `aud` the token URI, `scope` FCM's, `iat`
/// and `exp` at most an hour apart and around now, signed by the account's key.
package struct FCMAssertionCheck: Sendable {
    package let clientEmail: String
    package let keyID: String
    package let audiences: Set<String>
    let publicKey: _RSA.Signing.PublicKey

    package init(clientEmail: String, keyID: String, publicKeyPEM: String, audiences: Set<String>) throws {
        self.clientEmail = clientEmail
        self.keyID = keyID
        self.audiences = audiences
        publicKey = try _RSA.Signing.PublicKey(pemRepresentation: publicKeyPEM)
    }

    /// nil when good; else the OAuth2 error description (`invalid_grant`).
    package func problem(with assertion: String, now: Date) -> String? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signatureData = Base64URL.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else {
            return "Invalid JWT: the assertion is not three base64url JSON parts"
        }
        guard header["alg"] as? String == "RS256" else { return "Invalid JWT: alg must be RS256" }
        if let kid = header["kid"] as? String, kid != keyID { return "Invalid JWT Signature." }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureData)
        guard publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5) else {
            return "Invalid JWT Signature."
        }
        guard claims["iss"] as? String == clientEmail else { return "Invalid issuer: the client email is not this service account's" }
        guard let audience = claims["aud"] as? String, audiences.contains(audience) else {
            return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe (aud)"
        }
        guard let scope = claims["scope"] as? String,
            scope.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging")
        else {
            return "Invalid scope: FCM needs https://www.googleapis.com/auth/firebase.messaging"
        }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, let exp = (claims["exp"] as? NSNumber)?.doubleValue,
            !(claims["iat"] is String), !(claims["exp"] is String), exp > iat, exp - iat <= 3600,
            now.timeIntervalSince1970 >= iat - 300, now.timeIntervalSince1970 < exp
        else {
            return
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
        }
        return nil
    }
}
