import Crypto
import Foundation
import RichPushCore
import Testing

@testable import RichPushWebPush

@Suite("RFC 8292 VAPID")
struct VAPIDSignerTests {
    static let subject = "mailto:ops@example.com"

    func subscription(_ endpoint: String) throws -> WebPushSubscription {
        try TestDevice(endpoint: endpoint).subscription
    }

    @Test(arguments: [
        ("https://fcm.googleapis.com/fcm/send/abc", "https://fcm.googleapis.com"),
        ("https://web.push.apple.com/QGuQyavXutnMH", "https://web.push.apple.com"),
        ("https://push.example.net:8443/p/1", "https://push.example.net:8443"),
        ("https://push.example.net:443/p/1", "https://push.example.net"),
    ])
    func theTokenHasTheRFCsShape(endpoint: String, audience: String) throws {
        let clock = TestClock()
        let key = P256.Signing.PrivateKey()
        let signer = try VAPIDSigner(privateKey: Base64URL.encode(key.rawRepresentation), subject: Self.subject, now: clock.function)
        let (token, k) = try vapidParameters(signer.authorization(for: subscription(endpoint)))

        #expect(k == Base64URL.encode(key.publicKey.x963Representation))
        #expect(k == signer.publicKey)
        #expect(base64URL(k).count == 65 && base64URL(k).first == 0x04)

        let jwt = try DecodedJWT(token)
        #expect(jwt.headerJSON == #"{"typ":"JWT","alg":"ES256"}"#)
        #expect(jwt.header == ["typ": "JWT", "alg": "ES256"])
        #expect(Set(jwt.claims.keys) == ["aud", "exp", "sub"])
        #expect(jwt.claims["aud"] as? String == audience)
        #expect(jwt.claims["sub"] as? String == Self.subject)
        let exp = try #require(jwt.claims["exp"] as? Int)
        let now = Int(clock.now.timeIntervalSince1970)
        #expect(exp == now + 12 * 3600)

        // ES256: the raw r‖s, 64 bytes, checked with the public key from k=.
        #expect(jwt.signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(x963Representation: base64URL(k))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        #expect(publicKey.isValidSignature(signature, for: Array(jwt.signingInput.utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Array((jwt.signingInput + "x").utf8)))
    }

    @Test func anHTTPSSubjectAndALifetimeOf24Hours() throws {
        let clock = TestClock()
        let signer = try VAPIDSigner(
            privateKey: makeVAPIDKey(), subject: "https://example.com/contact", tokenLifetime: .seconds(86400), now: clock.function)
        let jwt = try DecodedJWT(vapidParameters(signer.authorization(for: subscription("https://push.example.net/p"))).token)
        #expect(jwt.claims["sub"] as? String == "https://example.com/contact")
        #expect(jwt.claims["exp"] as? Int == Int(clock.now.timeIntervalSince1970) + 86400)
    }

    @Test func aFractionalClockNeverPushesExpPast24Hours() throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000.999))
        let signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: Self.subject, tokenLifetime: .seconds(86400), now: clock.function)
        let jwt = try DecodedJWT(vapidParameters(signer.authorization(for: subscription("https://push.example.net/p"))).token)
        let exp = try #require(jwt.claims["exp"] as? Int)
        #expect(Double(exp) <= clock.now.timeIntervalSince1970 + 86400)
    }

    @Test func oneSignaturePerOriginAcrossManyPushes() throws {
        let clock = TestClock()
        let signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: Self.subject, now: clock.function)
        let origins = ["https://fcm.googleapis.com", "https://updates.push.services.mozilla.com", "https://web.push.apple.com"]
        let subscriptions = try origins.flatMap { origin in try (0..<5).map { try subscription("\(origin)/push/\($0)") } }
        var seen: [String: String] = [:]
        for round in 0..<2_000 {
            let subscription = subscriptions[round % subscriptions.count]
            let authorization = try signer.authorization(for: subscription)
            if let earlier = seen[subscription.origin] { #expect(earlier == authorization) }
            seen[subscription.origin] = authorization
            if round % 100 == 0 { clock.advance(by: 60) }  // 20 minutes in all
        }
        #expect(signer.signatureCount == origins.count)
        #expect(Set(seen.values).count == origins.count)
    }

    @Test func concurrentFirstPushesToAnOriginSignOnce() async throws {
        let signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: Self.subject)
        let subscription = try subscription("https://push.example.net/p")
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try signer.authorization(for: subscription) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(values.count == 1)
        #expect(signer.signatureCount == 1)
    }

    @Test func theTokenIsRenewedAtHalfItsLife() throws {
        let clock = TestClock()
        let signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: Self.subject, now: clock.function)
        let subscription = try subscription("https://push.example.net/p")
        let first = try signer.authorization(for: subscription)
        clock.advance(by: 6 * 3600 - 1)
        #expect(try signer.authorization(for: subscription) == first)
        #expect(signer.signatureCount == 1)
        clock.advance(by: 1)
        let second = try signer.authorization(for: subscription)
        #expect(second != first)
        #expect(signer.signatureCount == 2)
        let exp = try #require(DecodedJWT(vapidParameters(second).token).claims["exp"] as? Int)
        #expect(exp == Int(clock.now.timeIntervalSince1970) + 12 * 3600)
        // A run of a day: one token per 6 hours.
        for _ in 0..<(24 * 60) {
            clock.advance(by: 60)
            _ = try signer.authorization(for: subscription)
        }
        #expect(signer.signatureCount == 2 + 4)
    }

    @Test func anEmptySubjectIsRefused() throws {
        let error = try #require(throws: WebPushError.self) { try VAPIDSigner(privateKey: makeVAPIDKey(), subject: "") }
        #expect(error.code == .invalidVAPIDConfiguration)
        #expect(error.message.contains("subject"))
        #expect(error.message.contains("Apple"))
    }

    @Test(arguments: ["ops@example.com", "http://example.com/contact", "mailto:", "mailto:a b@example.com", "tel:+15555555555"])
    func aSubjectThatIsNotAContactIsRefused(subject: String) throws {
        let error = try #require(throws: WebPushError.self) { try VAPIDSigner(privateKey: makeVAPIDKey(), subject: subject) }
        #expect(error.code == .invalidVAPIDConfiguration)
    }

    @Test func aSubjectWithQuotesStaysInsideItsJSONString() throws {
        let subject = #"mailto:"x\"@example.com"#
        let signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: subject)
        let jwt = try DecodedJWT(vapidParameters(signer.authorization(for: subscription("https://push.example.net/p"))).token)
        #expect(jwt.claims["sub"] as? String == subject)
    }

    @Test(arguments: [
        "", "not a key", Base64URL.encode([UInt8](repeating: 1, count: 31)), Base64URL.encode([UInt8](repeating: 0, count: 32)),
        Base64URL.encode([UInt8](repeating: 0xFF, count: 32)), String(repeating: "A", count: 10_000),
    ])
    func aKeyThatIsNotAP256ScalarIsRefused(key: String) throws {
        let error = try #require(throws: WebPushError.self) { try VAPIDSigner(privateKey: key, subject: Self.subject) }
        #expect(error.code == .invalidVAPIDConfiguration)
        #expect(!error.message.contains(key) || key.isEmpty)
    }

    @Test(arguments: [0, 59, 86401])
    func lifetimesOutsideOneMinuteTo24HoursAreRefused(seconds: Int) throws {
        #expect(throws: WebPushError.self) {
            try VAPIDSigner(privateKey: makeVAPIDKey(), subject: Self.subject, tokenLifetime: .seconds(seconds))
        }
    }
}
