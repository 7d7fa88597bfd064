import Crypto
import Foundation
import RichPushCore
import RichPushWebhooks
import Testing

/// The signature a receiver checks: HMAC-SHA256 of "<timestamp>.<body>" with the secret.
@Suite("Webhook signatures")
struct WebhookSignatureTests {
    static let body = Array(#"{"deliveryId":"dlv_1","events":[],"webhookId":"wh_1"}"#.utf8)

    @Test func theSignatureIsTheDocumentedHMAC() {
        // Computed independently of WebhookSignature, as a receiver in any language would.
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array("1764000000.".utf8) + Self.body, using: SymmetricKey(data: Array("whsec_k".utf8)))
        let expected = "v1=" + mac.map { String(format: "%02x", $0) }.joined()
        #expect(WebhookSignature.sign(secret: "whsec_k", timestamp: 1_764_000_000, body: Self.body) == expected)
    }

    @Test func itVerifiesWithTheSecretAndFailsWithAnythingElse() {
        let now: Int64 = 1_764_000_000
        let header = WebhookSignature.sign(secret: "whsec_right", timestamp: now, body: Self.body)
        #expect(WebhookSignature.verify(header: header, timestamp: "\(now)", body: Self.body, secret: "whsec_right", now: now + 10))
        #expect(!WebhookSignature.verify(header: header, timestamp: "\(now)", body: Self.body, secret: "whsec_wrong", now: now))
        #expect(!WebhookSignature.verify(header: header, timestamp: "\(now)", body: Self.body + [0x20], secret: "whsec_right", now: now))
        #expect(!WebhookSignature.verify(header: header, timestamp: "\(now + 1)", body: Self.body, secret: "whsec_right", now: now))
        // Too old (a replay): refused even though the MAC is right.
        #expect(!WebhookSignature.verify(header: header, timestamp: "\(now)", body: Self.body, secret: "whsec_right", now: now + 301))
        #expect(!WebhookSignature.verify(header: "", timestamp: "\(now)", body: Self.body, secret: "whsec_right", now: now))
        // During a rotation, one of several signatures matching is enough.
        #expect(WebhookSignature.verify(header: "v1=00, " + header, timestamp: "\(now)", body: Self.body, secret: "whsec_right", now: now))
    }
}
