import Crypto
import Foundation
import RichPushCore
import RichPushFCM
import Testing
import _CryptoExtras

/// The service account and its OAuth2 assertion, as Google's token endpoint checks them.
@Suite("FCM service account")
struct FCMServiceAccountTests {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func file(_ change: (inout [String: Any]) -> Void = { _ in }) throws -> [UInt8] {
        var object: [String: Any] = [
            "type": "service_account", "project_id": "richpush-demo", "private_key_id": "0123456789abcdef",
            "private_key": key.pkcs8PEMRepresentation, "client_email": "fcm@richpush-demo.iam.gserviceaccount.com",
            "client_id": "1234567890", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        change(&object)
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    @Test func anAssertionGoogleCanVerify() throws {
        let account = try FCMServiceAccount(json: try Self.file())
        #expect(account.projectID == "richpush-demo" && account.tokenURI == "https://oauth2.googleapis.com/token")
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        let parts = try account.assertion(issuedAt: issued).split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let headerData = try #require(Base64URL.decode(parts[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: String])
        #expect(header == ["alg": "RS256", "typ": "JWT", "kid": "0123456789abcdef"])
        let claimsData = try #require(Base64URL.decode(parts[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        #expect(claims["iss"] as? String == "fcm@richpush-demo.iam.gserviceaccount.com")
        #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["iat"] as? Int == 1_800_000_000 && claims["exp"] as? Int == 1_800_003_600)
        // RS256: PKCS #1 v1.5 with SHA-256 over "header.claims", checked with the public key.
        let signatureData = try #require(Base64URL.decode(parts[2]))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureData)
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        let publicKey = try _RSA.Signing.PublicKey(pemRepresentation: account.publicKeyPEM)
        #expect(publicKey.isValidSignature(signature, for: signed, padding: .insecurePKCS1v1_5))
        // A different key's signature does not verify: the check can fail.
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey
        #expect(!other.isValidSignature(signature, for: signed, padding: .insecurePKCS1v1_5))
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        ("type", "not 'service_account'"),
        ("project_id", "no \"project_id\""),
        ("client_email", "no \"client_email\""),
        ("token_uri", "no \"token_uri\""),
        ("private_key", "no \"private_key\""),
        ("bad key", "not a PEM RSA private key"),
        ("bad project", "not a Google project id"),
    ])
    func badFilesGiveAClearErrorWithoutTheKey(problem: String, message: String) throws {
        let json: [UInt8]
        switch problem {
        case "not json": json = Array("{\"type\": ".utf8)
        case "type": json = try Self.file { $0["type"] = "authorized_user" }
        case "bad key": json = try Self.file { $0["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }
        case "bad project": json = try Self.file { $0["project_id"] = "Bad Project!" }
        default: json = try Self.file { $0.removeValue(forKey: problem) }
        }
        #expect { _ = try FCMServiceAccount(json: json) } throws: { error in
            let text = "\(error)"
            return text.contains(message) && !text.contains("BEGIN")
        }
    }

    @Test func anOversizedFileIsRefusedBeforeParsing() {
        #expect(throws: FCMConfigurationError.self) {
            _ = try FCMServiceAccount(json: Array(repeating: UInt8(ascii: " "), count: 65 * 1024))
        }
    }
}

extension FCMServiceAccountTests {
    /// An account in a log line or a debugger names itself, never its key.
    @Test func printingAnAccountNeverShowsTheKey() throws {
        let account = try FCMServiceAccount(json: try Self.file())
        let keyBody = Self.key.pkcs8PEMRepresentation.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
        for text in ["\(account)", String(reflecting: account), "\([account])"] {
            #expect(
                text.contains("fcm@richpush-demo.iam.gserviceaccount.com") && !text.contains(keyBody) && !text.contains("PRIVATE KEY"),
                "\(text)")
        }
    }
}
