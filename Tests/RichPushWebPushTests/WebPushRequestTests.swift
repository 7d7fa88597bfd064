import Crypto
import Foundation
import RichPushCore
import Testing

@testable import RichPushWebPush

@Suite("RFC 8030 push requests")
struct WebPushRequestTests {
    let device: TestDevice
    let signer: VAPIDSigner

    init() throws {
        device = try TestDevice(endpoint: "https://push.example.net:8443/push/abc")
        signer = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: "mailto:ops@example.com")
    }

    @Test func aRequestCarriesEveryHeaderAndTheEncryptedBody() throws {
        let payload = Array(#"{"id":"n-1"}"#.utf8)
        let request = try WebPushRequest(
            payload: payload, to: device.subscription, vapid: signer, ttl: .seconds(3600), urgency: .high, collapseID: "promo-42"
        )
        #expect(request.method == "POST")
        #expect(request.endpoint == "https://push.example.net:8443/push/abc")
        #expect(request.headers.map(\.name) == ["TTL", "Urgency", "Topic", "Content-Encoding", "Content-Type", "Authorization"])
        #expect(request.header("ttl") == "3600")
        #expect(request.header("Urgency") == "high")
        #expect(request.header("Topic") == "promo-42")
        #expect(request.header("Content-Encoding") == "aes128gcm")
        #expect(request.header("Content-Type") == "application/octet-stream")
        let (token, key) = try vapidParameters(try #require(request.header("Authorization")))
        #expect(key == signer.publicKey)
        #expect(try DecodedJWT(token).claims["aud"] as? String == "https://push.example.net:8443")
        #expect(try device.decrypt(request.body) == payload)
    }

    @Test func withoutATTLTheDefaultIsSentNeverZero() throws {
        let request = try WebPushRequest(payload: [1], to: device.subscription, vapid: signer, ttl: nil)
        #expect(request.header("TTL") == "86400")
        #expect(request.header("Urgency") == "normal")
        #expect(request.header("Topic") == nil)
        let custom = WebPushRequest.Template(ttl: nil, defaultTTL: .seconds(600))
        #expect(custom.ttl == 600)
    }

    @Test(arguments: [
        (Duration.seconds(0), 0), (.milliseconds(1), 1), (.milliseconds(1500), 2), (.seconds(60), 60),
        (.seconds(-5), 0), (.seconds(40 * 86400), 28 * 86400),
    ])
    func ttlSeconds(ttl: Duration, seconds: Int) {
        #expect(WebPushRequest.seconds(ttl) == seconds)
        #expect(WebPushRequest.Template(ttl: ttl).ttl == seconds)
    }

    @Test func urgencyFromThePriority() {
        #expect(WebPushUrgency(.high) == .high)
        #expect(WebPushUrgency(.normal) == .normal)
        #expect(WebPushUrgency.allCases.map(\.rawValue) == ["very-low", "low", "normal", "high"])
    }

    @Test(arguments: ["a", "promo-42", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "under_score"])
    func aCollapseIDThatFitsIsTheTopic(collapseID: String) {
        #expect(WebPushRequest.topic(for: collapseID) == collapseID)
    }

    @Test(arguments: ["ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "8F1C6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B", "a.b", "with space", "é", "a/b+c="])
    func otherCollapseIDsBecomeAStableDigest(collapseID: String) throws {
        let topic = try #require(WebPushRequest.topic(for: collapseID))
        #expect(topic.utf8.count == 32)
        #expect(topic.utf8.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.contains($0) })
        #expect(topic == Base64URL.encode(SHA256.hash(data: Array(collapseID.utf8)).prefix(24)))
        #expect(WebPushRequest.topic(for: collapseID) == topic)
        #expect(WebPushRequest.topic(for: collapseID + "x") != topic)
    }

    @Test func anEmptyCollapseIDSendsNoTopic() {
        #expect(WebPushRequest.topic(for: "") == nil)
        #expect(WebPushRequest.Template(ttl: nil, collapseID: "").topic == nil)
    }

    @Test func aTooLargePayloadFailsBeforeSigning() throws {
        let fresh = try VAPIDSigner(privateKey: makeVAPIDKey(), subject: "mailto:ops@example.com")
        let error = try #require(throws: WebPushError.self) {
            try WebPushRequest(payload: [UInt8](repeating: 0, count: 3994), to: device.subscription, vapid: fresh, ttl: nil)
        }
        #expect(error.code == .payloadTooLarge)
        #expect(fresh.signatureCount == 0)
        _ = try WebPushRequest(payload: [UInt8](repeating: 0, count: 3993), to: device.subscription, vapid: fresh, ttl: nil)
        #expect(fresh.signatureCount == 1)
    }

    @Test func aTemplateServesAFanOutWithOneTokenPerOrigin() throws {
        let template = WebPushRequest.Template(ttl: .seconds(120), urgency: .low, collapseID: "8F1C6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B")
        let devices = try (0..<20).map { try TestDevice(endpoint: "https://push.example.net/push/\($0)") }
        for device in devices {
            let request = try template.request(payload: Array("hi".utf8), to: device.subscription, vapid: signer)
            #expect(request.header("TTL") == "120")
            #expect(request.header("Urgency") == "low")
            #expect(request.header("Topic") == template.topic)
            #expect(try device.decrypt(request.body) == Array("hi".utf8))
        }
        #expect(signer.signatureCount == 1)
    }

    @Test func theVAPIDKeyIsNeverTheECDHKey() throws {
        let request = try WebPushRequest(payload: Array("x".utf8), to: device.subscription, vapid: signer, ttl: nil)
        #expect(Array(request.body[21..<86]) != base64URL(signer.publicKey))
    }
}
