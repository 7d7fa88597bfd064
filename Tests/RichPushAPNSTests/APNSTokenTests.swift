import Crypto
import Foundation
import RichPushAPNS
import Testing

@Suite("APNs provider token")
struct APNSTokenTests {
    static let pem = P256.Signing.PrivateKey().pemRepresentation
    static var key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(pemRepresentation: pem) }

    static func decode(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    @Test func anES256TokenAppleCanVerify() throws {
        let signer = try APNSSigningKey(pem: Self.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let token = try signer.token(issuedAt: Date(timeIntervalSince1970: 1_437_179_036))
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        let header = try #require(Self.decode(parts[0]).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "ABC123DEFG")
        let claims = try #require(Self.decode(parts[1]).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(claims["iss"] as? String == "DEF123GHIJ" && (claims["iat"] as? NSNumber)?.intValue == 1_437_179_036)
        // The signature is the raw r‖s (64 bytes), over "header.claims", valid for the public key.
        let raw = try #require(Self.decode(parts[2]))
        #expect(raw.count == 64)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(Self.key.publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func badKeysAndIdsAreRefusedWithoutShowingTheKey() {
        #expect(throws: APNSConfigurationError.self) { try APNSSigningKey(pem: Self.pem, keyID: "short", teamID: "DEF123GHIJ") }
        #expect(throws: APNSConfigurationError.self) { try APNSSigningKey(pem: Self.pem, keyID: "ABC123DEFG", teamID: "DEF123GHI!") }
        let secret = "-----BEGIN PRIVATE KEY-----\nnot-a-key-SECRETSECRET\n-----END PRIVATE KEY-----"
        do {
            _ = try APNSSigningKey(pem: secret, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
            Issue.record("a bad key was accepted")
        } catch {
            #expect(!error.description.contains("SECRET"))
        }
    }
}
