import Crypto
import Foundation
import RichPushCore
import Testing

@testable import RichPushWebPush

// A browser's toJSON(): base64url without padding (RFC 8291 §5's user agent keys).
private let validP256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
private let validAuth = "BTBZMqHH6r4Tts7J_aSIgg"
private let validEndpoint = "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH-abc_123?x=1"

@Suite("Web Push subscriptions checked at the door")
struct WebPushSubscriptionTests {
    @Test func aBrowsersSubscriptionIsAccepted() throws {
        let subscription = try WebPushSubscription(endpoint: validEndpoint, p256dh: validP256DH, auth: validAuth)
        #expect(subscription.endpoint == validEndpoint)
        #expect(subscription.origin == "https://fcm.googleapis.com")
        #expect(subscription.p256dh.count == 65)
        #expect(subscription.auth.count == 16)
        #expect(subscription.p256dhBase64URL == validP256DH)
        #expect(subscription.authBase64URL == validAuth)
        #expect(WebPushSubscription.problem(endpoint: validEndpoint, p256dh: validP256DH, auth: validAuth) == nil)
    }

    @Test func paddedKeysAreAcceptedToo() throws {
        let padded = try WebPushSubscription(endpoint: validEndpoint, p256dh: validP256DH + "=", auth: validAuth + "==")
        let plain = try WebPushSubscription(endpoint: validEndpoint, p256dh: validP256DH, auth: validAuth)
        #expect(padded == plain)
    }

    @Test(arguments: [
        ("https://updates.push.services.mozilla.com/wpush/v2/gAAAA", "https://updates.push.services.mozilla.com"),
        ("https://web.push.apple.com/QGuQyavXutnMH", "https://web.push.apple.com"),
        ("https://Push.Example.NET:443/a", "https://push.example.net"),
        ("https://push.example.net:8443/a", "https://push.example.net:8443"),
        ("https://push.example.net", "https://push.example.net"),
        ("https://push.example.net?token=1", "https://push.example.net"),
        ("https://10.0.0.7:9000/p", "https://10.0.0.7:9000"),
        ("https://[2001:DB8::1]:8443/p", "https://[2001:db8::1]:8443"),
    ])
    func origins(endpoint: String, origin: String) throws {
        #expect(try WebPushSubscription(endpoint: endpoint, p256dh: validP256DH, auth: validAuth).origin == origin)
    }

    @Test(arguments: ["http://localhost:8090/push/1", "http://127.0.0.1/p", "http://127.8.9.10:1/p", "http://[::1]:9/p"])
    func insecureLoopbackOnlyWhenAllowed(endpoint: String) throws {
        let error = try #require(WebPushSubscription.problem(endpoint: endpoint, p256dh: validP256DH, auth: validAuth))
        #expect(error.field == "endpoint")
        let subscription = try WebPushSubscription(endpoint: endpoint, p256dh: validP256DH, auth: validAuth, allowInsecureLoopback: true)
        #expect(subscription.origin.hasPrefix("http://"))
        #expect(!subscription.origin.hasSuffix(":80"))
    }

    @Test func theDefaultHTTPPortIsLeftOutOfTheOrigin() throws {
        let subscription = try WebPushSubscription(
            endpoint: "http://localhost:80/p", p256dh: validP256DH, auth: validAuth, allowInsecureLoopback: true)
        #expect(subscription.origin == "http://localhost")
    }

    /// Each refused input, and the field the 400 names.
    @Test(arguments: [
        // endpoint
        ("", validP256DH, validAuth, "endpoint"),
        ("http://push.example.net/p", validP256DH, validAuth, "endpoint"),
        ("ftp://push.example.net/p", validP256DH, validAuth, "endpoint"),
        ("push.example.net/p", validP256DH, validAuth, "endpoint"),
        ("https://", validP256DH, validAuth, "endpoint"),
        ("https:///p", validP256DH, validAuth, "endpoint"),
        ("https://user:pw@push.example.net/p", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net/p#frag", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net/a b", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net/\u{e9}", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net:0/p", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net:65536/p", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net:x/p", validP256DH, validAuth, "endpoint"),
        ("https://push_example.net/p", validP256DH, validAuth, "endpoint"),
        ("https://-push.example.net/p", validP256DH, validAuth, "endpoint"),
        ("https://push..example.net/p", validP256DH, validAuth, "endpoint"),
        ("https://[::1/p", validP256DH, validAuth, "endpoint"),
        ("https://push.example.net/" + String(repeating: "a", count: 2048), validP256DH, validAuth, "endpoint"),
        // keys.p256dh
        (validEndpoint, "", validAuth, "keys.p256dh"),
        (validEndpoint, "not base64!", validAuth, "keys.p256dh"),
        (validEndpoint, String(repeating: "A", count: 5000), validAuth, "keys.p256dh"),
        (validEndpoint, validP256DH.replacingOccurrences(of: "-", with: "+"), validAuth, "keys.p256dh"),
        (validEndpoint, validP256DH + "===", validAuth, "keys.p256dh"),
        (validEndpoint, String(validP256DH.dropLast(2)), validAuth, "keys.p256dh"),
        (validEndpoint, Base64URL.encode([0x04] + [UInt8](repeating: 1, count: 64)), validAuth, "keys.p256dh"),
        (validEndpoint, Base64URL.encode([0x03] + [UInt8](repeating: 1, count: 32)), validAuth, "keys.p256dh"),
        (validEndpoint, Base64URL.encode([0x05] + Array(base64URL(validP256DH).dropFirst())), validAuth, "keys.p256dh"),
        // keys.auth
        (validEndpoint, validP256DH, "", "keys.auth"),
        (validEndpoint, validP256DH, "BTBZMqHH6r4Tts7J_aSI", "keys.auth"),
        (validEndpoint, validP256DH, "BTBZMqHH6r4Tts7J_aSIggAA", "keys.auth"),
        (validEndpoint, validP256DH, "BTBZMqHH6r4Tts7J/aSIgg", "keys.auth"),
        (validEndpoint, validP256DH, String(repeating: "A", count: 4096), "keys.auth"),
    ])
    func refused(endpoint: String, p256dh: String, auth: String, field: String) throws {
        let error = try #require(WebPushSubscription.problem(endpoint: endpoint, p256dh: p256dh, auth: auth))
        #expect(error.code == .invalidSubscription)
        #expect(error.field == field)
        #expect(error.description.hasPrefix(field + ": "))
        #expect(throws: WebPushError.self) { try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth) }
    }

    @Test func theEndpointIsCheckedFirst() throws {
        let error = try #require(WebPushSubscription.problem(endpoint: "http://push.example.net/p", p256dh: "x", auth: "y"))
        #expect(error.field == "endpoint")
    }

    @Test func rawKeysAreCheckedLikeEncodedOnes() throws {
        let key = P256.KeyAgreement.PrivateKey().publicKey
        #expect(throws: WebPushError.self) {
            try WebPushSubscription(
                endpoint: validEndpoint, p256dh: [UInt8](key.compressedRepresentation), auth: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: WebPushError.self) {
            try WebPushSubscription(
                endpoint: validEndpoint, p256dh: [UInt8](key.x963Representation), auth: [UInt8](repeating: 0, count: 15))
        }
        _ = try WebPushSubscription(
            endpoint: validEndpoint, p256dh: [UInt8](key.x963Representation), auth: [UInt8](repeating: 0, count: 16))
    }

    @Test func theMessagesSayWhatIsWrong() throws {
        let compressed = Base64URL.encode([0x03] + [UInt8](repeating: 1, count: 32))
        #expect(
            WebPushSubscription.problem(endpoint: validEndpoint, p256dh: compressed, auth: validAuth)?.description
                == "keys.p256dh: must be 65 bytes (an uncompressed P-256 point), got 33")
        #expect(
            WebPushSubscription.problem(endpoint: validEndpoint, p256dh: validP256DH, auth: "AAAA")?.description
                == "keys.auth: must be 16 bytes, got 3")
        #expect(
            WebPushSubscription.problem(endpoint: "http://push.example.net/", p256dh: validP256DH, auth: validAuth)?.description
                == "endpoint: must be an https:// URL")
    }
}
