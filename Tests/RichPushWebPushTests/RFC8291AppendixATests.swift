import Crypto
import Foundation
import RichPushCore
import Testing

@testable import RichPushWebPush

/// RFC 8291 §5 and Appendix A, "Intermediate Values for Encryption": every value as the RFC prints
/// it (base64url; the RFC's line breaks joined), reproduced bit for bit. A mistake that is the
/// same on both sides (a wrong info string, say) survives a round trip, never this.
@Suite("RFC 8291 Appendix A")
struct RFC8291AppendixATests {
    // Inputs.
    static let plaintext = "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24"
    static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIg" + "Dll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcx" + "aOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"

    // Intermediate values.
    static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
    static let keyInfo =
        "V2ViUHVzaDogaW5mbwAEJXGyvs3942BVGq8e0PTNNmwRzr5VX4m8t7GGpTM5FzFo7OLr4BhZe9MEebhuPI-OztV3ylkYfpJGmQ22ggCLDgT-M_SrDepxkU21WCP3O1SUj0EwbZIHMtu5pZpTKGSCIA5Zent7wmC6HCJ5mFgJkuk5cwAvMBKiiujwa7t45ewP"
    static let prkKey = "Snr3JMxaHVDXHWJn5wdC52WjpCtd2EIEGBykDcZW32k"
    static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
    static let prk = "09_eUZGrsvxChDCGRCdkLiDXrReGOEVeSCdCcPBSJSc"
    static let cekInfo = "Q29udGVudC1FbmNvZGluZzogYWVzMTI4Z2NtAA"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonceInfo = "Q29udGVudC1FbmNvZGluZzogbm9uY2UA"
    static let nonce = "4h_95klXJ5E_qnoN"
    static let header =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let ciphertext = "8pfeW0KbunFT06SuDKoJH9Ql87S1QUrdirN6GcG7sFz1y1sqLgVi1VhjVkHsUoEsbI_0LpXMuGvnzQ"

    // §5: the body of the example's request.
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
        + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
        + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func subscription() throws -> WebPushSubscription {
        try WebPushSubscription(
            endpoint: "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV", p256dh: uaPublic, auth: authSecret)
    }

    @Test func thePlaintextIsTheWatermelon() {
        #expect(String(decoding: base64URL(Self.plaintext), as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func encryptionWithTheExampleKeyAndSaltGivesTheExampleBody() throws {
        let ephemeral = try P256.KeyAgreement.PrivateKey(rawRepresentation: base64URL(Self.asPrivate))
        #expect(Array(ephemeral.publicKey.x963Representation) == base64URL(Self.asPublic))
        let body = try WebPushEncryption.encrypt(
            Array("When I grow up, I want to be a watermelon".utf8), for: Self.subscription(), ephemeralKey: ephemeral,
            salt: base64URL(Self.salt)
        )
        #expect(Base64URL.encode(body) == Self.body)
        #expect(body == base64URL(Self.body))
        #expect(Array(body.prefix(86)) == base64URL(Self.header))
        #expect(Array(body.dropFirst(86)) == base64URL(Self.ciphertext))
    }

    @Test func everyIntermediateValueMatches() throws {
        let asKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: base64URL(Self.asPrivate))
        let uaKey = try P256.KeyAgreement.PublicKey(x963Representation: base64URL(Self.uaPublic))
        let secret = try asKey.sharedSecretFromKeyAgreement(with: uaKey).withUnsafeBytes { Array($0) }
        #expect(Base64URL.encode(secret) == Self.ecdhSecret)
        #expect(Base64URL.encode(ContentKeys.keyInfoLabel + base64URL(Self.uaPublic) + base64URL(Self.asPublic)) == Self.keyInfo)
        #expect(
            Base64URL.encode(HMAC<SHA256>.authenticationCode(for: secret, using: SymmetricKey(data: base64URL(Self.authSecret))))
                == Self.prkKey)
        #expect(Base64URL.encode(ContentKeys.cekInfo) == Self.cekInfo)
        #expect(Base64URL.encode(ContentKeys.nonceInfo) == Self.nonceInfo)

        let keys = ContentKeys(
            ecdhSecret: secret, auth: base64URL(Self.authSecret),
            receiverPublicKey: base64URL(Self.uaPublic), senderPublicKey: base64URL(Self.asPublic), salt: base64URL(Self.salt)
        )
        #expect(Base64URL.encode(keys.ikm) == Self.ikm)
        #expect(Base64URL.encode(keys.prk) == Self.prk)
        #expect(keys.cek.withUnsafeBytes { Base64URL.encode(Array($0)) } == Self.cek)
        #expect(Base64URL.encode(keys.nonce) == Self.nonce)
    }

    @Test func theUserAgentDecryptsTheExampleBody() throws {
        let uaKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: base64URL(Self.uaPrivate))
        #expect(Array(uaKey.publicKey.x963Representation) == base64URL(Self.uaPublic))
        let plaintext = try WebPushEncryption.decrypt(base64URL(Self.body), receiverPrivateKey: uaKey, auth: base64URL(Self.authSecret))
        #expect(plaintext == base64URL(Self.plaintext))
    }
}
