package import Crypto
import Foundation

extension WebPushEncryption {
    /// Reads an `aes128gcm` body as a browser would (RFC 8291 §3–4, RFC 8188 §2): the header
    /// (16-byte salt, `rs`, a 65-byte keyid that is the sender's P-256 key), one record, the
    /// tag, then the padding delimiter 0x02. For simulated web devices and tests; every malformed
    /// body is an error, never a crash.
    package static func decrypt(
        _ body: [UInt8], receiverPrivateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]
    ) throws(WebPushError) -> [UInt8] {
        func malformed(_ message: String) -> WebPushError { WebPushError(.malformedBody, message) }
        guard auth.count == WebPush.authSecretBytes else {
            throw malformed("the authentication secret must be 16 bytes, got \(auth.count)")
        }
        guard body.count <= WebPush.maxBodyBytes else {
            throw malformed("\(body.count) bytes is more than a push message carries (\(WebPush.maxBodyBytes))")
        }
        // salt (16) ‖ rs (4) ‖ idlen (1)
        guard body.count >= 21 else { throw malformed("\(body.count) bytes is shorter than the aes128gcm header") }
        let salt = Array(body[0..<16])
        let rs = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idlen = Int(body[20])
        guard idlen == WebPush.publicKeyBytes else {
            throw malformed("keyid must be the sender's 65-byte uncompressed P-256 key (RFC 8291 §4), idlen is \(idlen)")
        }
        guard body.count >= 21 + idlen else { throw malformed("the body ends inside the header's keyid") }
        let senderPublicKey = Array(body[21..<(21 + idlen)])
        let record = body[(21 + idlen)...]
        // RFC 8188 §2: rs is at least 18 (a delimiter, a tag, one more byte); one record of
        // ciphertext ‖ tag no longer than rs (RFC 8291 §4: a push message is a single record).
        guard rs >= 18 else { throw malformed("rs must be at least 18, got \(rs)") }
        guard record.count >= 1 + WebPush.tagBytes else {
            throw malformed("the record is \(record.count) bytes, too short for a padding delimiter and a 16-byte tag")
        }
        guard record.count <= rs else { throw malformed("the body holds more than one record (\(record.count) bytes, rs \(rs))") }

        guard senderPublicKey[0] == 0x04, let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublicKey) else {
            throw malformed("keyid is not an uncompressed point on P-256")
        }
        let ecdhSecret: [UInt8]
        do {
            ecdhSecret = try receiverPrivateKey.sharedSecretFromKeyAgreement(with: sender).withUnsafeBytes { Array($0) }
        } catch {
            throw WebPushError(.cryptoFailure, "ECDH with the sender's key failed")
        }
        let keys = ContentKeys(
            ecdhSecret: ecdhSecret, auth: auth,
            receiverPublicKey: [UInt8](receiverPrivateKey.publicKey.x963Representation), senderPublicKey: senderPublicKey, salt: salt
        )
        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: keys.nonce), ciphertext: record.dropLast(WebPush.tagBytes), tag: record.suffix(WebPush.tagBytes)
            )
            padded = try [UInt8](AES.GCM.open(box, using: keys.cek))
        } catch {
            throw WebPushError(.decryptionFailed, "the record does not authenticate: not for these keys, or altered")
        }
        // plaintext ‖ 0x02 ‖ 0x00*: the last non-zero byte is the delimiter, 0x02 for a last record.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }) else { throw malformed("the record has no padding delimiter") }
        guard padded[delimiter] == 0x02 else {
            throw malformed("the padding delimiter is 0x\(String(padded[delimiter], radix: 16)), not 0x02 (the last record's)")
        }
        return Array(padded[..<delimiter])
    }
}
