import Crypto
import Testing

@testable import RichPushWebPush

@Suite("RFC 8291 aes128gcm encryption")
struct WebPushEncryptionTests {
    @Test(arguments: [1, 41, WebPush.maxPlaintextBytes])
    func roundTrips(length: Int) throws {
        let device = try TestDevice()
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = try WebPushEncryption.encrypt(plaintext, for: device.subscription)
        #expect(body.count == WebPush.headerBytes + length + 1 + WebPush.tagBytes)
        #expect(body.count <= WebPush.maxBodyBytes)
        #expect(try device.decrypt(body) == plaintext)
    }

    @Test func theLargestMessageIsExactly4096Bytes() throws {
        let device = try TestDevice()
        let body = try WebPushEncryption.encrypt([UInt8](repeating: 0x61, count: 3993), for: device.subscription)
        #expect(body.count == 4096)
    }

    @Test func theHeaderIsOneRecordOfRS4096WithTheSendersKey() throws {
        let device = try TestDevice()
        let body = try WebPushEncryption.encrypt(Array("hello".utf8), for: device.subscription)
        #expect(Array(body[16..<20]) == [0x00, 0x00, 0x10, 0x00])
        #expect(body[20] == 65)
        let keyID = Array(body[21..<86])
        #expect(keyID[0] == 0x04)
        #expect((try? P256.KeyAgreement.PublicKey(x963Representation: keyID)) != nil)
        #expect(keyID != device.subscription.p256dh)
    }

    @Test func everyMessageHasAFreshKeyAndSalt() throws {
        let device = try TestDevice()
        let first = try WebPushEncryption.encrypt(Array("same".utf8), for: device.subscription)
        let second = try WebPushEncryption.encrypt(Array("same".utf8), for: device.subscription)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
        #expect(first != second)
    }

    @Test func paddingIsOptionalAndRemoved() throws {
        let device = try TestDevice()
        let body = try WebPushEncryption.encrypt(Array("short".utf8), for: device.subscription, padding: 100)
        #expect(body.count == 86 + 5 + 1 + 100 + 16)
        #expect(try device.decrypt(body) == Array("short".utf8))
        #expect(throws: WebPushError.self) {
            try WebPushEncryption.encrypt([UInt8](repeating: 1, count: 3900), for: device.subscription, padding: 94)
        }
    }

    @Test func a3994ByteMessageIsRefusedBeforeAnyCrypto() throws {
        let device = try TestDevice()
        let error = try #require(throws: WebPushError.self) {
            try WebPushEncryption.encrypt([UInt8](repeating: 0, count: 3994), for: device.subscription)
        }
        #expect(error.code == .payloadTooLarge)
        #expect(error.message.contains("3993"))
        #expect(error.message.contains("3994"))
        // The explicit entry point checks first too: an invalid salt would trap if it came later.
        let refused = try #require(throws: WebPushError.self) {
            try WebPushEncryption.encrypt(
                [UInt8](repeating: 0, count: 3994), for: device.subscription, ephemeralKey: P256.KeyAgreement.PrivateKey(), salt: [])
        }
        #expect(refused.code == .payloadTooLarge)
    }
}

@Suite("aes128gcm bodies refused on decryption")
struct WebPushDecryptionTests {
    let device: TestDevice
    let body: [UInt8]

    init() throws {
        device = try TestDevice()
        body = try WebPushEncryption.encrypt(Array("When I grow up, I want to be a watermelon".utf8), for: device.subscription)
    }

    func refusal(_ body: [UInt8], auth: [UInt8]? = nil) throws -> WebPushError {
        try #require(throws: WebPushError.self) {
            try WebPushEncryption.decrypt(body, receiverPrivateKey: device.privateKey, auth: auth ?? device.auth)
        }
    }

    @Test(arguments: [0, 1, 20, 21, 50, 85, 86, 87, 102])
    func truncatedBodies(length: Int) throws {
        #expect(try refusal(Array(body.prefix(length))).code == .malformedBody)
    }

    @Test func aBodyCutShortOfItsTagDoesNotAuthenticate() throws {
        #expect(try refusal(Array(body.dropLast(1))).code == .decryptionFailed)
    }

    @Test(arguments: [0, 32, 64, 66, 255])
    func keyIDsOtherThan65Bytes(idlen: Int) throws {
        var altered = body
        altered[20] = UInt8(idlen)
        let error = try refusal(altered)
        #expect(error.code == .malformedBody)
        #expect(error.message.contains("idlen"))
    }

    @Test func aKeyIDOffTheCurve() throws {
        var altered = body
        altered[21] = 0x05
        #expect(try refusal(altered).code == .malformedBody)
        altered = body
        altered[60] ^= 0x01
        #expect(try refusal(altered).code == .malformedBody)
    }

    @Test func aRecordSizeTooSmall() throws {
        var altered = body
        altered[16...19] = [0, 0, 0, 17]
        #expect(try refusal(altered).code == .malformedBody)
        altered[16...19] = [0, 0, 0, 18]  // one record of 58 bytes does not fit rs 18
        #expect(try refusal(altered).code == .malformedBody)
    }

    @Test func alteredBytesFailTheTag() throws {
        // The salt feeds the keys, the rest is the sealed record. (A single record's rs feeds
        // nothing: RFC 8188 cannot tell a changed rs that still holds the record.)
        for index in [0, 15, 86, 100, body.count - 1] {
            var altered = body
            altered[index] ^= 0x80
            #expect(try refusal(altered).code == .decryptionFailed, "byte \(index)")
        }
        var tag = body
        tag[tag.count - 1] ^= 0x01
        #expect(try refusal(tag).code == .decryptionFailed)
    }

    @Test func theWrongAuthSecretFails() throws {
        var auth = device.auth
        auth[0] ^= 0xFF
        #expect(try refusal(body, auth: auth).code == .decryptionFailed)
        #expect(try refusal(body, auth: [1, 2, 3]).code == .malformedBody)
    }

    @Test func aBodyLargerThanAPushMessage() throws {
        #expect(try refusal(body + [UInt8](repeating: 0, count: 4096)).code == .malformedBody)
    }

    /// Records sealed with the right keys but a delimiter RFC 8188 does not allow here.
    @Test(arguments: [[0x01] as [UInt8], [0x00, 0x00], [], [0x03]])
    func badPaddingDelimiters(tail: [UInt8]) throws {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let salt = [UInt8](repeating: 7, count: 16)
        let secret = try ephemeral.sharedSecretFromKeyAgreement(with: device.privateKey.publicKey).withUnsafeBytes { Array($0) }
        let senderKey = [UInt8](ephemeral.publicKey.x963Representation)
        let keys = ContentKeys(
            ecdhSecret: secret, auth: device.auth, receiverPublicKey: device.subscription.p256dh, senderPublicKey: senderKey, salt: salt)
        let sealed = try AES.GCM.seal(Array("hi".utf8) + tail, using: keys.cek, nonce: AES.GCM.Nonce(data: keys.nonce))
        let forged = WebPushEncryption.header(salt: salt, senderPublicKey: senderKey) + sealed.ciphertext + sealed.tag
        let error = try refusal(forged)
        #expect(error.code == .malformedBody)
        #expect(error.message.contains("delimiter"))
    }
}
