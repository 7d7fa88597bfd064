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
        let ikm = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ecdhSecret), salt: auth, info: keyInfo, outputByteCount: 32)
        // PRK = HKDF-Extract(salt, IKM); CEK and NONCE expand it (the sequence number is 0).
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        self.ikm = ikm.withUnsafeBytes { Array($0) }
        self.prk = Array(prk)
        self.cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Self.cekInfo, outputByteCount: 16)
        self.nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Self.nonceInfo, outputByteCount: 12).withUnsafeBytes { Array($0) }
    }
}
