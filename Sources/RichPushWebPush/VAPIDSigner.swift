import Crypto
package import Foundation
import RichPushCore
import Synchronization

/// An app's VAPID identity (RFC 8292) and the tokens it signs: `Authorization: vapid t=<JWT>,
/// k=<public key>`, the JWT an ES256 token with `aud` the push service's origin, `exp` and `sub`.
///
/// Signing costs far more than the rest of a push, and push services take a token for its whole
/// life, so one token per origin is cached and renewed at half its life: a run of any number of
/// pushes signs at most one token per origin per half-life (6 hours by default), where the
/// common libraries sign one per message. One signer per app: its key and subject are the app's.
package final class VAPIDSigner: Sendable {
    /// The contact push services may use (`mailto:` or `https:`), the JWT's `sub`.
    package let subject: String
    /// The uncompressed public key (65 bytes), base64url: the `k=` of every header, and what
    /// browsers were given as `applicationServerKey`.
    package let publicKey: String
    /// From signing to `exp`; at most 24 hours (RFC 8292 §2).
    package let tokenLifetime: Duration

    /// The key's raw scalar: swift-crypto's key types are not Sendable, so a key is rebuilt to
    /// sign, which happens once per origin per half-life, not per push.
    private let rawKey: [UInt8]
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    private struct State {
        var tokens: [String: CachedToken] = [:]
        var signatures = 0
    }

    private struct CachedToken {
        let authorization: String
        let renewAt: Date
    }

    package static let defaultTokenLifetime: Duration = .seconds(12 * 3600)
    package static let maxTokenLifetime: Duration = .seconds(24 * 3600)
    package static let minTokenLifetime: Duration = .seconds(60)
    /// Push services are a handful of origins; past this many, tokens due for renewal are dropped.
    static let maxCachedOrigins = 1024

    /// `privateKey`: the 32-byte P-256 scalar, base64url (as `WebPushCredential.privateKey` keeps
    /// it). `subject` is required (Apple's push service refuses a token without `sub`). `now` is
    /// the wall clock `exp` is counted from; tests pass their own.
    package init(
        privateKey: String, subject: String, tokenLifetime: Duration = defaultTokenLifetime,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(WebPushError) {
        func invalid(_ message: String) -> WebPushError { WebPushError(.invalidVAPIDConfiguration, message) }
        guard privateKey.utf8.count <= 64, let raw = WebPushSubscription.decodeBase64URL(privateKey), raw.count == 32,
            let key = try? P256.Signing.PrivateKey(rawRepresentation: raw)
        else {
            // Never the key's text: it is a secret.
            throw invalid("the VAPID private key must be a P-256 scalar: 32 bytes, base64url")
        }
        if let problem = Self.subjectProblem(subject) { throw invalid("the VAPID subject \(problem)") }
        guard tokenLifetime >= Self.minTokenLifetime, tokenLifetime <= Self.maxTokenLifetime else {
            throw invalid("a VAPID token lives 1 minute to 24 hours (RFC 8292 §2), not \(tokenLifetime)")
        }
        self.rawKey = raw
        self.subject = subject
        self.publicKey = Base64URL.encode(key.publicKey.x963Representation)
        self.tokenLifetime = tokenLifetime
        self.now = now
    }

    /// Why `subject` cannot be a VAPID `sub`, or nil: it is required here, and a `mailto:` or
    /// `https:` URI (RFC 8292 §2.1) of 8 to 512 characters without spaces or controls.
    package static func subjectProblem(_ subject: String) -> String? {
        guard !subject.isEmpty else {
            return "is required: a mailto: or https: contact (Apple's push service refuses a token without one)"
        }
        guard (8...512).contains(subject.utf8.count) else { return "must be 8 to 512 characters (mailto:… or https://…)" }
        guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://") else {
            return "must be a mailto: or https: URI (RFC 8292 §2.1)"
        }
        guard !subject.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return "must have no spaces or control characters" }
        return nil
    }

    /// The `Authorization` header value for a message to `subscription`: the cached token of its
    /// origin, signed anew when there is none or it is past half its life.
    package func authorization(for subscription: WebPushSubscription) throws(WebPushError) -> String {
        try authorization(origin: subscription.origin)
    }

    /// How many tokens this signer has signed: the benchmark's figure, and a test's.
    package var signatureCount: Int { state.withLock { $0.signatures } }

    func authorization(origin: String) throws(WebPushError) -> String {
        let now = self.now()
        // Signing under the lock: two first pushes to an origin sign one token, not two, and a
        // renewal holds the others up for one signature (tens of microseconds) per half-life.
        return try state.withLock { (state) throws(WebPushError) -> String in
            if let cached = state.tokens[origin], now < cached.renewAt { return cached.authorization }
            let lifetime = tokenLifetime.components.seconds
            let issued = Int64(now.timeIntervalSince1970.rounded(.down))
            let jwt = try token(audience: origin, expiresAt: issued + lifetime)
            state.signatures += 1
            let authorization = "vapid t=\(jwt), k=\(publicKey)"
            if state.tokens[origin] == nil, state.tokens.count >= Self.maxCachedOrigins {
                state.tokens = state.tokens.filter { now < $0.value.renewAt }
                if state.tokens.count >= Self.maxCachedOrigins { state.tokens.removeAll() }
            }
            state.tokens[origin] = CachedToken(
                authorization: authorization,
                renewAt: Date(timeIntervalSince1970: TimeInterval(issued) + TimeInterval(lifetime) / 2)
            )
            return authorization
        }
    }

    /// The JWT (RFC 7519) RFC 8292 §2 describes: header `{"typ":"JWT","alg":"ES256"}`, claims
    /// `aud`, `exp` (seconds since 1970) and `sub`; the signature the raw 64-byte r‖s (RFC 7518
    /// §3.4), every part base64url without padding.
    func token(audience: String, expiresAt: Int64) throws(WebPushError) -> String {
        let header = Base64URL.encode(#"{"typ":"JWT","alg":"ES256"}"#.utf8)
        let claims: Data
        do {
            let encoder = JSONEncoder()
            // Sorted for tokens that compare equal; slashes plain, as every JWT library writes them.
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            claims = try encoder.encode(Claims(aud: audience, exp: expiresAt, sub: subject))
        } catch {
            throw WebPushError(.cryptoFailure, "the VAPID claims could not be encoded")
        }
        let signingInput = header + "." + Base64URL.encode(claims)
        do {
            let signature = try P256.Signing.PrivateKey(rawRepresentation: rawKey).signature(for: Array(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw WebPushError(.cryptoFailure, "signing the VAPID token failed")
        }
    }

    private struct Claims: Encodable {
        let aud: String
        let exp: Int64
        let sub: String
    }
}
