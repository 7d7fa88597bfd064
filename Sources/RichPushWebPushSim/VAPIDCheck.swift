import Crypto
import Foundation
import RichPushCore

/// The push service's side of RFC 8292 (VAPID), written from the RFC rather than from any
/// sender's code: the `vapid` authentication scheme (§3) carrying a JWT `t` and the sender's
/// public key `k`; the JWT (§2) signed with ES256 by that key (raw r‖s, RFC 7515 §A.3), its `aud`
/// the push resource's origin, its `exp` present, ahead and at most 24 hours ahead, and its `sub`
/// a `mailto:` or `https:` URI; and, for a subscription restricted to an application server key,
/// that key (§4.2).
enum VAPIDCheck {
    struct Identity: Equatable {
        /// The `sub` claim: the application server's contact.
        let subject: String
        /// `k`, the uncompressed public key.
        let publicKey: [UInt8]
    }

    /// What a verified token says: kept by ``VerifiedTokens`` so a sender's cached token is parsed
    /// and its signature verified once, while `aud`, `exp`, `sub` and the subscription's key are
    /// still checked against every push.
    struct Token {
        let identity: Identity
        let audience: String?
        /// `exp` as a JSON number; nil when absent or not a number.
        let expiry: Double?
        /// `sub` as a string; nil when absent or not a string.
        let subject: String?
        /// Whether `sub` is a contact (``isContact(_:)``).
        let subjectIsContact: Bool
    }

    /// - Parameters:
    ///   - authorization: the request's `Authorization` header.
    ///   - origin: the push service's origin as RFC 6454 §6.1 serializes it (`https://host:port`).
    ///   - applicationServerKey: the key the subscription was restricted to, if any.
    ///   - verified: tokens already verified (by the header as sent); nil checks each one.
    static func check(
        authorization: String?, origin: String, applicationServerKey: [UInt8]?, now: Date,
        verified: VerifiedTokens? = nil
    ) -> Result<Identity, WebPushSimError> {
        guard let authorization else {
            return unauthorized(
                .missingAuthorization,
                "Missing Authorization header: this push service requires VAPID (RFC 8292 §3: Authorization: vapid t=<JWT>, k=<key>)")
        }
        // The header as sent is the cache's key: a sender's cached token is parsed once too.
        let parsed: Token
        if let known = verified?.token(authorization) {
            parsed = known
        } else {
            guard let (scheme, parameters) = parseCredentials(authorization), scheme.lowercased() == "vapid" else {
                return unauthorized(.invalidAuthorization, "Authorization must use the vapid scheme with t and k parameters (RFC 8292 §3)")
            }
            guard let token = parameters["t"], let key = parameters["k"] else {
                return unauthorized(
                    .invalidAuthorization, "The vapid credentials need both t (the JWT, RFC 8292 §3.1) and k (the public key, §3.2)")
            }
            switch verify(token: token, key: key) {
            case .failure(let error): return .failure(error)
            case .success(let value): parsed = value
            }
            verified?.insert(authorization, parsed)
        }
        return check(parsed, origin: origin, applicationServerKey: applicationServerKey, now: now)
    }

    /// The key's shape, the JWT's shape and algorithm, and its ES256 signature by the key.
    static func verify(token: String, key: String) -> Result<Token, WebPushSimError> {
        guard let keyBytes = Base64URL.decodeBytes(key), keyBytes.count == 65, keyBytes.first == 4,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else {
            return unauthorized(.invalidAuthorization, "k is not a base64url uncompressed P-256 public key (65 bytes, RFC 8292 §3.2)")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decodeBytes(parts[0]), let claimsBytes = Base64URL.decodeBytes(parts[1]),
            let signature = Base64URL.decodeBytes(parts[2]),
            case .object(let header)? = JSONValue.parse(headerBytes), case .object(let claims)? = JSONValue.parse(claimsBytes)
        else {
            return unauthorized(.invalidAuthorization, "t is not a JWT: three base64url parts, a JSON header and JSON claims (RFC 7519)")
        }
        guard header["alg"] == .string("ES256") else {
            return unauthorized(.invalidAuthorization, "The JWT's alg must be ES256 (RFC 8292 §2)")
        }
        guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else {
            return unauthorized(.badSignature, "The JWT's signature is not valid for k (ES256, raw r||s: RFC 8292 §2, RFC 7518 §3.4)")
        }
        let audience: String? = if case .string(let text)? = claims["aud"] { text } else { nil }
        // A JSON number, never a string (RFC 7519 §2 NumericDate).
        let expiry: Double? = if case .number(let text)? = claims["exp"] { Double(text) } else { nil }
        let subject: String? = if case .string(let text)? = claims["sub"] { text } else { nil }
        return .success(
            Token(
                identity: Identity(subject: subject ?? "", publicKey: keyBytes), audience: audience, expiry: expiry, subject: subject,
                subjectIsContact: subject.map(isContact) ?? false))
    }

    /// A verified token's claims against this push: the audience, the time, the contact and the
    /// subscription's key.
    static func check(_ token: Token, origin: String, applicationServerKey: [UInt8]?, now: Date) -> Result<Identity, WebPushSimError> {
        guard token.audience == origin else {
            let given = token.audience.map { "'\($0)'" } ?? "none"
            return unauthorized(.wrongAudience, "The JWT's aud must be this push service's origin \(origin), not \(given) (RFC 8292 §2)")
        }
        guard let seconds = token.expiry else {
            return unauthorized(.badExpiry, "The JWT has no exp, or not as a number (RFC 8292 §2: it MUST be included)")
        }
        let current = now.timeIntervalSince1970
        guard seconds > current else {
            return unauthorized(.badExpiry, "The JWT expired \(Int(current - seconds)) s ago (exp, RFC 8292 §2)")
        }
        guard seconds <= current + 86400 else {
            return unauthorized(.badExpiry, "The JWT's exp is \(Int(seconds - current)) s ahead: at most 24 hours (RFC 8292 §2)")
        }
        guard token.subjectIsContact else {
            return unauthorized(
                .badSubject, "The JWT's sub must be a mailto: or https: URI (RFC 8292 §2.1; Apple's push service refuses a JWT without it)")
        }
        if let applicationServerKey, applicationServerKey != token.identity.publicKey {
            return .failure(
                WebPushSimError(
                    403, errno: 109, .keyMismatch,
                    "k is not the applicationServerKey this subscription was created with (RFC 8292 §4.2)"))
        }
        return .success(token.identity)
    }

    private static func unauthorized<Value>(_ reason: WebPushSimError.Reason, _ text: String) -> Result<Value, WebPushSimError> {
        .failure(WebPushSimError(401, errno: 109, reason, text))
    }

    /// `mailto:` with an address, or an `https:` URL with a host.
    static func isContact(_ text: String) -> Bool {
        if text.lowercased().hasPrefix("mailto:") { return text.count > 7 && text.contains("@") }
        guard let url = URLComponents(string: text), url.scheme?.lowercased() == "https", let host = url.host else { return false }
        return !host.isEmpty
    }

    /// `scheme param=value, param="value"` (RFC 9110 §11.4): the scheme and the parameters.
    static func parseCredentials(_ text: String) -> (String, [String: String])? {
        let trimmed = trimmingOptionalWhitespace(Substring(text))
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        var parameters: [String: String] = [:]
        for part in trimmed[space...].split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            var value = trimmingOptionalWhitespace(pair[1])
            if value.utf8.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            parameters[trimmingOptionalWhitespace(pair[0]).lowercased()] = String(value)
        }
        return (String(trimmed[..<space]), parameters)
    }

    /// Without the spaces and tabs around it (RFC 9110 §5.6.3 OWS).
    static func trimmingOptionalWhitespace(_ text: Substring) -> Substring {
        func isWhitespace(_ character: Character) -> Bool { character == " " || character == "\t" }
        guard let first = text.firstIndex(where: { !isWhitespace($0) }), let last = text.lastIndex(where: { !isWhitespace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
