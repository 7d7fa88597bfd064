import Crypto
import Foundation

/// An application server as RFC 8292 and RFC 8291 describe it, written here from the RFCs (not
/// from RichPushWebPush): a VAPID key, JWTs whose every part a test can get wrong on purpose, and
/// bodies shaped as one `aes128gcm` record.
struct TestSender: Sendable {
    /// The VAPID private key's raw bytes (swift-crypto's keys are not `Sendable`).
    private let keyBytes = P256.Signing.PrivateKey().rawRepresentation

    var key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: keyBytes) }
    var publicKey: P256.Signing.PublicKey { key.publicKey }

    /// The JWT's claims; nil leaves a claim out.
    struct Claims {
        var aud: String?
        var exp: Double?
        var sub: String? = "mailto:push@example.com"
    }

    /// `vapid t=<JWT>, k=<key>` (RFC 8292 §3) with good claims for `audience`, 12 hours ahead.
    func authorization(audience: String, now: Date) -> String {
        authorization(token: jwt(Claims(aud: audience, exp: now.timeIntervalSince1970 + 12 * 3600)))
    }

    func authorization(token: String, k: P256.Signing.PublicKey? = nil) -> String {
        "vapid t=\(token), k=\(Self.base64URL((k ?? publicKey).x963Representation))"
    }

    /// An ES256 JWT (RFC 7515, raw r‖s signature) with `claims`, signed by `signer` (default: this
    /// sender's key) with header `alg`.
    func jwt(_ claims: Claims, signer: P256.Signing.PrivateKey? = nil, alg: String = "ES256") -> String {
        var object: [String: Any] = [:]
        if let aud = claims.aud { object["aud"] = aud }
        if let exp = claims.exp { object["exp"] = Int(exp) }
        if let sub = claims.sub { object["sub"] = sub }
        let header = Self.base64URL(Array("{\"typ\":\"JWT\",\"alg\":\"\(alg)\"}".utf8))
        let payload = Self.base64URL(Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        let signature = try! (signer ?? key).signature(for: Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(Self.base64URL(signature.rawRepresentation))"
    }

    /// A body shaped as RFC 8291 sends it: salt (16), rs 4096, idlen 65, a fresh ECDH public key,
    /// and one record of `plaintextBytes` + 1 delimiter + 16 tag bytes (random: the push service
    /// cannot decrypt, so it checks the shape only).
    static func aes128gcmBody(plaintextBytes: Int, rs: UInt32 = 4096) -> [UInt8] {
        var body = (0..<16).map { _ in UInt8.random(in: 0...255) }
        body += [UInt8(rs >> 24), UInt8(rs >> 16 & 0xff), UInt8(rs >> 8 & 0xff), UInt8(rs & 0xff), 65]
        body += Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        body += (0..<(plaintextBytes + 17)).map { _ in UInt8.random(in: 0...255) }
        return body
    }

    static func base64URL(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
