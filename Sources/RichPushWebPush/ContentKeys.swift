import Crypto

/// The content encryption key and nonce of one message (RFC 8291 §3.3–3.4, RFC 8188 §2.2–2.3),
/// with the intermediate values Appendix A prints.
struct ContentKeys {
    let ikm: [UInt8]
    let prk: [UInt8]
    let cek: SymmetricKey
    let nonce: [UInt8]

    static let keyInfoLabel = Array("WebPush: info".utf8) + [0]
    static let cekInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
    static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]

    init(ecdhSecret: [UInt8], auth: [UInt8], receiverPublicKey: [UInt8], senderPublicKey: [UInt8], salt: [UInt8]) {
        // key_info = "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public
        // IKM = HKDF(salt: auth_secret, IKM: ecdh_secret, info: key_info, L: 32)
        let keyInfo = Self.keyInfoLabel + receiverPublicKey + senderPublicKey
        let ikm = HKDFSHA256.expand(HKDFSHA256.extract(salt: auth, inputKeyMaterial: ecdhSecret), info: keyInfo, count: 32)
        // PRK = HKDF-Extract(salt, IKM); CEK and NONCE expand it (the sequence number is 0).
        let prk = HKDFSHA256.extract(salt: salt, inputKeyMaterial: ikm)
        self.ikm = ikm
        self.prk = prk
        // Both expand the same PRK: its HMAC is keyed once and copied (a keyed HMAC is a value).
        let keyed = HMAC<SHA256>(key: SymmetricKey(data: prk))
        self.cek = SymmetricKey(data: HKDFSHA256.expand(keyed, info: Self.cekInfo, count: 16))
        self.nonce = HKDFSHA256.expand(keyed, info: Self.nonceInfo, count: 12)
    }
}

/// HKDF with SHA-256 (RFC 5869) for outputs of at most one hash, as every key of RFC 8291 is:
/// Extract is one HMAC, Expand one more (T(1) = HMAC(PRK, info ‖ 0x01)). Crypto's `HKDF` builds
/// its output through `SecureBytes` appends, which cost a tenth of a push's CPU.
enum HKDFSHA256 {
    static func extract(salt: [UInt8], inputKeyMaterial: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: inputKeyMaterial, using: SymmetricKey(data: salt)))
    }

    static func expand(_ pseudoRandomKey: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        expand(HMAC<SHA256>(key: SymmetricKey(data: pseudoRandomKey)), info: info, count: count)
    }

    /// The same with the PRK's HMAC already keyed.
    static func expand(_ keyed: HMAC<SHA256>, info: [UInt8], count: Int) -> [UInt8] {
        precondition(count <= SHA256.byteCount, "one block of HKDF-Expand gives at most 32 bytes")
        var block = keyed
        block.update(data: info)
        block.update(data: [1])
        return Array(Array(block.finalize()).prefix(count))
    }
}
