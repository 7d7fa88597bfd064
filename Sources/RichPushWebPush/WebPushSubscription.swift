import Crypto
import RichPushCore

/// A browser's push subscription, as `PushSubscription.toJSON()` gives it: the push resource URL
/// (`endpoint`) and the keys messages are encrypted to (`keys.p256dh`, `keys.auth`). Every value
/// is checked here, so a subscription that exists can be encrypted to and sent to.
package struct WebPushSubscription: Sendable, Hashable {
    /// The push resource (RFC 8030 §5) exactly as given: the registration's handle.
    package let endpoint: String
    /// `scheme://host[:port]` of the endpoint, the port only when not the scheme's default:
    /// the VAPID `aud` (RFC 8292 §2) and the key of the token cache.
    package let origin: String
    /// The user agent's ECDH public key: an uncompressed P-256 point (65 bytes, 0x04 first).
    package let p256dh: [UInt8]
    /// The subscription's authentication secret, 16 bytes.
    package let auth: [UInt8]
    /// `p256dh` as the point it was checked to be: parsed once, here, not again for each message.
    /// Crypto does not mark its keys Sendable; this one is never changed after it is made (an
    /// ECDH only reads it), so sharing it across tasks is safe.
    nonisolated(unsafe) let receiverKey: P256.KeyAgreement.PublicKey

    package static let maxEndpointBytes = 2048
    /// 65 bytes are 87 base64url characters, 88 with padding; a little room for nothing else.
    static let maxP256DHCharacters = 92
    /// 16 bytes are 22 characters, 24 with padding.
    static let maxAuthCharacters = 28

    /// From the parts of `PushSubscription.toJSON()`: both keys base64url, with or without
    /// padding. `allowInsecureLoopback` admits `http:` for a loopback host (a local push
    /// service); otherwise the endpoint must be `https:`.
    package init(endpoint: String, p256dh: String, auth: String, allowInsecureLoopback: Bool = false) throws(WebPushError) {
        let parsed = try WebPushEndpoint(endpoint, allowInsecureLoopback: allowInsecureLoopback)
        guard p256dh.utf8.count <= Self.maxP256DHCharacters else {
            throw Self.invalid("keys.p256dh", "too long for a P-256 public key (\(p256dh.utf8.count) characters; 87 expected)")
        }
        guard let key = Self.decodeBase64URL(p256dh) else {
            throw Self.invalid("keys.p256dh", "not base64url (A-Z, a-z, 0-9, '-', '_', optionally '=' padding)")
        }
        let receiverKey = try Self.checkP256DH(key)
        guard auth.utf8.count <= Self.maxAuthCharacters else {
            throw Self.invalid("keys.auth", "too long for a 16-byte secret (\(auth.utf8.count) characters; 22 expected)")
        }
        guard let secret = Self.decodeBase64URL(auth) else {
            throw Self.invalid("keys.auth", "not base64url (A-Z, a-z, 0-9, '-', '_', optionally '=' padding)")
        }
        try Self.checkAuth(secret)
        self.init(checked: endpoint, origin: parsed.origin, p256dh: key, receiverKey: receiverKey, auth: secret)
    }

    /// From raw keys, as a simulated web device that made them has them.
    package init(endpoint: String, p256dh: [UInt8], auth: [UInt8], allowInsecureLoopback: Bool = false) throws(WebPushError) {
        let parsed = try WebPushEndpoint(endpoint, allowInsecureLoopback: allowInsecureLoopback)
        let receiverKey = try Self.checkP256DH(p256dh)
        try Self.checkAuth(auth)
        self.init(checked: endpoint, origin: parsed.origin, p256dh: p256dh, receiverKey: receiverKey, auth: auth)
    }

    private init(checked endpoint: String, origin: String, p256dh: [UInt8], receiverKey: P256.KeyAgreement.PublicKey, auth: [UInt8]) {
        self.endpoint = endpoint
        self.origin = origin
        self.p256dh = p256dh
        self.receiverKey = receiverKey
        self.auth = auth
    }

    /// The same subscription: the same endpoint and keys (the parsed key follows from `p256dh`).
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.endpoint == rhs.endpoint && lhs.p256dh == rhs.p256dh && lhs.auth == rhs.auth
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(endpoint)
        hasher.combine(p256dh)
        hasher.combine(auth)
    }

    private static func checkP256DH(_ key: [UInt8]) throws(WebPushError) -> P256.KeyAgreement.PublicKey {
        guard key.count == WebPush.publicKeyBytes else {
            throw invalid("keys.p256dh", "must be 65 bytes (an uncompressed P-256 point), got \(key.count)")
        }
        guard key[0] == 0x04 else {
            throw invalid("keys.p256dh", "must be an uncompressed P-256 point (first byte 0x04), got 0x\(Hex.encode([key[0]]))")
        }
        guard let point = try? P256.KeyAgreement.PublicKey(x963Representation: key) else {
            throw invalid("keys.p256dh", "not a point on the P-256 curve")
        }
        return point
    }

    private static func checkAuth(_ secret: [UInt8]) throws(WebPushError) {
        guard secret.count == WebPush.authSecretBytes else { throw invalid("keys.auth", "must be 16 bytes, got \(secret.count)") }
    }

    /// Why these parts are not a subscription, naming the field (`"keys.p256dh: …"`), or nil:
    /// the body of the API's 400.
    package static func problem(endpoint: String, p256dh: String, auth: String, allowInsecureLoopback: Bool = false) -> WebPushError? {
        do {
            _ = try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth, allowInsecureLoopback: allowInsecureLoopback)
            return nil
        } catch {
            return error
        }
    }

    /// `keys.p256dh` as `toJSON()` gives it: base64url without padding.
    package var p256dhBase64URL: String { Base64URL.encode(p256dh) }
    /// `keys.auth` as `toJSON()` gives it: base64url without padding.
    package var authBase64URL: String { Base64URL.encode(auth) }

    static func invalid(_ field: String, _ message: String) -> WebPushError {
        WebPushError(.invalidSubscription, message, field: field)
    }

    /// Base64url (RFC 4648 §5) with or without its padding; nil for any other character
    /// (standard base64's `+` and `/` included), misplaced or excess padding, or an empty text.
    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var utf8 = Substring(text).utf8
        var padding = 0
        while utf8.last == UInt8(ascii: "=") {
            utf8 = utf8.dropLast()
            padding += 1
        }
        guard !utf8.isEmpty, padding == 0 || (padding <= 2 && (utf8.count + padding) % 4 == 0) else { return nil }
        guard
            utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            })
        else { return nil }
        return Base64URL.decodeBytes(Substring(utf8))
    }
}
