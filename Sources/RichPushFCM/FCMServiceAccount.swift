import Crypto
package import Foundation
import RichPushCore
import _CryptoExtras

/// A Google service account, from the JSON file the Firebase console gives ("Project settings →
/// Service accounts → Generate new private key"). It signs the OAuth2 assertion (an RS256 JWT,
/// RFC 7523) that `token_uri` exchanges for an access token to FCM HTTP v1. The private key is
/// never logged, and no error repeats the file's text.
package struct FCMServiceAccount: Sendable {
    package let projectID: String
    package let clientEmail: String
    package let privateKeyID: String
    package let tokenURI: String
    private let privateKey: _RSA.Signing.PrivateKey

    /// The scope of FCM HTTP v1.
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Service-account files are a few KiB; anything much larger is not one.
    package static let maxFileBytes = 64 * 1024
    /// Google's assertions may live at most an hour.
    package static let assertionLifetime: TimeInterval = 3600

    private struct File: Decodable {
        var type: String?
        var project_id: String?
        var private_key_id: String?
        var private_key: String?
        var client_email: String?
        var token_uri: String?
    }

    package init(json: [UInt8]) throws(FCMConfigurationError) {
        guard json.count <= Self.maxFileBytes else {
            throw FCMConfigurationError("the service-account file is \(json.count) bytes; a Google service-account JSON is a few KiB")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(json))
        } catch {
            throw FCMConfigurationError(
                "the service-account file is not JSON with string fields (download it again from the Firebase console)")
        }
        guard file.type == "service_account" else {
            throw FCMConfigurationError(
                "the credentials file's \"type\" is \(file.type.map { "'\($0.prefix(40))'" } ?? "missing"), not 'service_account'")
        }
        func required(_ value: String?, _ name: String) throws(FCMConfigurationError) -> String {
            guard let value, !value.isEmpty, value.utf8.count <= 2048 else {
                throw FCMConfigurationError("the service-account file has no \"\(name)\"")
            }
            return value
        }
        projectID = try required(file.project_id, "project_id")
        clientEmail = try required(file.client_email, "client_email")
        privateKeyID = try required(file.private_key_id, "private_key_id")
        tokenURI = try required(file.token_uri, "token_uri")
        // Google's project ids: 6 to 30 lowercase letters, digits and hyphens.
        guard (6...30).contains(projectID.utf8.count),
            projectID.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") })
        else {
            throw FCMConfigurationError(
                "\"project_id\" '\(projectID.prefix(40))' is not a Google project id (6 to 30 lowercase letters, digits, '-')")
        }
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw FCMConfigurationError("\"token_uri\" must be an http(s) URL")
        }
        let key = try required(file.private_key, "private_key")
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: key)
        } catch {
            throw FCMConfigurationError("\"private_key\" is not a PEM RSA private key of 2048 bits or more")
        }
    }

    /// The signed assertion to exchange at `tokenURI`: `{"alg":"RS256","typ":"JWT","kid":…}` and
    /// `iss` = the client email, `scope`, `aud` = the token URI, `iat`, `exp` = `iat` + 1 h.
    package func assertion(issuedAt: Date) throws -> String {
        let iat = Int(issuedAt.timeIntervalSince1970)
        var header = JSONWriter(capacity: 96)
        header.beginObject()
        header.field("alg", "RS256")
        header.field("kid", privateKeyID)
        header.field("typ", "JWT")
        header.endObject()
        var claims = JSONWriter(capacity: 256)
        claims.beginObject()
        claims.field("aud", tokenURI)
        claims.field("exp", iat + Int(Self.assertionLifetime))
        claims.field("iat", iat)
        claims.field("iss", clientEmail)
        claims.field("scope", Self.scope)
        claims.endObject()
        let signingInput = Base64URL.encode(header.bytes) + "." + Base64URL.encode(claims.bytes)
        let signature = try privateKey.signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The public half, for a server that checks assertions (`richpush fcm-sim`).
    package var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }
}

/// A configuration the FCM adapter cannot work with; the message says what to fix.
package struct FCMConfigurationError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

extension FCMServiceAccount: CustomStringConvertible, CustomDebugStringConvertible {
    /// Who the account is, never its key: interpolating an account into a log line is safe.
    package var description: String {
        "service account \(clientEmail) (project \(projectID), key \(privateKeyID), private key redacted)"
    }

    package var debugDescription: String { description }
}
