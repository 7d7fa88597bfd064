import Crypto
import Foundation

/// RFC 8291 message encryption with the RFC 8188 `aes128gcm` content coding: what a push
/// service carries and only the subscribed browser can read. Each message gets a fresh
/// ephemeral ECDH key and a fresh 16-byte salt, and is one record of `rs` 4,096 ending in the
/// padding delimiter 0x02. The VAPID key never takes part: it signs, this agrees keys.
package enum WebPushEncryption {
    /// The `aes128gcm` body for `plaintext` (at most 3,993 bytes), encrypted to the subscription's
    /// keys. `padding` zero bytes may follow the delimiter to hide the length (none by default);
    /// plaintext and padding together fit one record.
    package static func encrypt(
        _ plaintext: [UInt8], for subscription: WebPushSubscription, padding: Int = 0
    ) throws(WebPushError) -> [UInt8] {
        // Before any key is made: an oversized message fails the same way every time, and cheaply.
        try checkSize(plaintext: plaintext.count, padding: padding)
        var random = SystemRandomNumberGenerator()
        return try encrypt(
            plaintext, for: subscription, ephemeralKey: ephemeralKey(&random), salt: randomBytes(WebPush.saltBytes, &random),
            padding: padding)
    }

    /// A fresh P-256 key for one message's ECDH: a uniformly random scalar in [1, n − 1] (a draw
    /// outside it, about 1 in 2³², is drawn again) and its public point. Not
    /// `P256.KeyAgreement.PrivateKey()`, which also runs FIPS's pairwise self-test (an ECDSA sign
    /// and verify, and the public point computed twice): five scalar multiplications where one
    /// does, most of the CPU of a push. An ephemeral key signs nothing.
    static func ephemeralKey(_ random: inout SystemRandomNumberGenerator) throws(WebPushError) -> P256.KeyAgreement.PrivateKey {
        for _ in 0..<8 {
            // BoringSSL refuses zero and a scalar not below the group's order.
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: randomBytes(32, &random)) { return key }
        }
        throw WebPushError(.cryptoFailure, "could not draw an ephemeral P-256 key")
    }

    /// `count` bytes (a multiple of 8) from the system's generator, 8 at a time.
    static func randomBytes(_ count: Int, _ random: inout SystemRandomNumberGenerator) -> [UInt8] {
        precondition(count % 8 == 0, "randomBytes draws whole 64-bit words")
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        for _ in 0..<(count / 8) {
            withUnsafeBytes(of: random.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// The same with the ephemeral key and salt given: RFC 8291 Appendix A reproduced in a test.
    /// Never for real messages, which must not reuse either.
    static func encrypt(
        _ plaintext: [UInt8], for subscription: WebPushSubscription, ephemeralKey: P256.KeyAgreement.PrivateKey, salt: [UInt8],
        padding: Int = 0
    ) throws(WebPushError) -> [UInt8] {
        try checkSize(plaintext: plaintext.count, padding: padding)
        precondition(salt.count == WebPush.saltBytes, "an aes128gcm salt is 16 bytes")
        let senderPublicKey = [UInt8](ephemeralKey.publicKey.x963Representation)
        let ecdhSecret: [UInt8]
        do {
            // The subscription checked that p256dh is a point on the curve, and kept the point.
            ecdhSecret = try ephemeralKey.sharedSecretFromKeyAgreement(with: subscription.receiverKey).withUnsafeBytes { Array($0) }
        } catch {
            throw WebPushError(.cryptoFailure, "ECDH with the subscription's key failed")
        }
        let keys = ContentKeys(
            ecdhSecret: ecdhSecret, auth: subscription.auth,
            receiverPublicKey: subscription.p256dh, senderPublicKey: senderPublicKey, salt: salt
        )
        var record = plaintext
        record.reserveCapacity(plaintext.count + 1 + padding)
        record.append(0x02)  // the delimiter of the last (and only) record
        record.append(contentsOf: repeatElement(0, count: padding))
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: keys.cek, nonce: AES.GCM.Nonce(data: keys.nonce))
        } catch {
            throw WebPushError(.cryptoFailure, "AES-128-GCM failed to seal the record")
        }
        var body = header(salt: salt, senderPublicKey: senderPublicKey)
        body.reserveCapacity(WebPush.headerBytes + record.count + WebPush.tagBytes)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }

    static func checkSize(plaintext: Int, padding: Int) throws(WebPushError) {
        guard padding >= 0 else { throw WebPushError(.payloadTooLarge, "padding cannot be negative") }
        guard plaintext + padding <= WebPush.maxPlaintextBytes else {
            let what = padding == 0 ? "\(plaintext) bytes" : "\(plaintext) bytes with \(padding) of padding"
            throw WebPushError(
                .payloadTooLarge,
                "a Web Push message carries at most \(WebPush.maxPlaintextBytes) bytes of plaintext (one 4,096-byte aes128gcm record, RFC 8291 §4); this one is \(what)"
            )
        }
    }

    /// salt ‖ rs (uint32, network order) ‖ idlen ‖ keyid: RFC 8188 §2.1, keyid being the sender's
    /// uncompressed public key (RFC 8291 §4).
    static func header(salt: [UInt8], senderPublicKey: [UInt8]) -> [UInt8] {
        let rs = UInt32(WebPush.recordSize)
        var header = salt
        header.append(contentsOf: [
            UInt8(truncatingIfNeeded: rs >> 24), UInt8(truncatingIfNeeded: rs >> 16), UInt8(truncatingIfNeeded: rs >> 8),
            UInt8(truncatingIfNeeded: rs),
        ])
        header.append(UInt8(senderPublicKey.count))
        header.append(contentsOf: senderPublicKey)
        return header
    }
}
