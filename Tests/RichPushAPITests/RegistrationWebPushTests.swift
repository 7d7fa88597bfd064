import APITestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// `PUT /api/register/{id}` for browsers: the subscription in the shape `PushSubscription.toJSON()`
/// gives and in Notification Hubs' `pushChannel`, its endpoint as the handle, its keys checked
/// (RFC 8291 §2) and stored with the installation, read back in the worker's one HMGET.
@Suite("Web Push registrations")
struct RegistrationWebPushTests {
    static let endpoint = "https://push.example.net/wpush/v2/gAAAAABk-abc_123"

    static func put(_ client: any TestClientProtocol, _ id: String, _ body: [String: Any]) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("alice") + [.contentType: "application/json"],
            body: APIFixture.json(body))
    }

    @Test func bothShapesRegisterAndTheKeysAreStored() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let keys = TestCredentials.webPushKeys()
            let other = TestCredentials.webPushKeys()
            try await fixture.test { client in
                let web = try await Self.put(
                    client, "web-1",
                    [
                        "Platform": "webpush", "Tags": ["news"],
                        "Subscription": [
                            "endpoint": Self.endpoint, "expirationTime": NSNull(),
                            "keys": ["p256dh": keys.p256dh, "auth": keys.auth],
                        ],
                    ])
                #expect(web.status == .ok, "\(String(buffer: web.body))")
                #expect(web.json["Handle"] as? String == Self.endpoint && web.json["Platform"] as? String == "webpush")
                let hub = try await Self.put(
                    client, "web-2",
                    [
                        "Platform": "browser",
                        "pushChannel": ["endpoint": Self.endpoint + "2", "p256dh": other.p256dh + "=", "auth": other.auth],
                    ])
                #expect(hub.status == .ok, "\(String(buffer: hub.body))")
            }
            let stored = try await RedisInstallationStore(redis: fixture.redis, keys: fixture.keys).installations(ids: ["web-1", "web-2"])
            #expect(stored.map(\.platform) == [.webpush, .webpush])
            #expect(stored[0].handle == Self.endpoint && stored[0].webPushKeys == WebPushKeys(p256dh: keys.p256dh, auth: keys.auth))
            // Padding sent is padding dropped: the keys are stored as base64url without it.
            #expect(stored[1].webPushKeys == WebPushKeys(p256dh: other.p256dh, auth: other.auth))
        }
    }

    @Test func whatABrowserCouldNotHaveSentIsRefusedByName() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let keys = TestCredentials.webPushKeys()
            // 65 bytes starting 0x04 but not a point on the curve; a compressed point; a 15-byte secret.
            let offCurve = TestCredentials.base64url(Data([0x04] + [UInt8](repeating: 7, count: 64)))
            let compressed = TestCredentials.base64url(Data([0x02] + [UInt8](repeating: 7, count: 32)))
            let shortAuth = TestCredentials.base64url(Data(repeating: 1, count: 15))
            try await fixture.test { client in
                func subscription(
                    _ endpoint: String = Self.endpoint, p256dh: String = keys.p256dh, auth: String = keys.auth
                ) -> [String: Any] {
                    ["endpoint": endpoint, "keys": ["p256dh": p256dh, "auth": auth]]
                }
                let cases: [(String, [String: Any], HTTPResponse.Status, String, String)] = [
                    ("no subscription", ["Platform": "webpush", "Handle": Self.endpoint], .badRequest, "missing_field", "Subscription"),
                    (
                        "http endpoint", ["Platform": "webpush", "Subscription": subscription("http://push.example.net/x")], .badRequest,
                        "bad_handle", "https"
                    ),
                    (
                        "long endpoint",
                        ["Platform": "webpush", "Subscription": subscription("https://p.example/" + String(repeating: "a", count: 2100))],
                        .badRequest, "bad_handle", "2048"
                    ),
                    (
                        "off the curve", ["Platform": "webpush", "Subscription": subscription(p256dh: offCurve)], .badRequest, "bad_key",
                        "Subscription.keys.p256dh"
                    ),
                    (
                        "compressed", ["Platform": "webpush", "Subscription": subscription(p256dh: compressed)], .badRequest, "bad_key",
                        "p256dh"
                    ),
                    (
                        "short auth",
                        ["Platform": "webpush", "pushChannel": ["endpoint": Self.endpoint, "p256dh": keys.p256dh, "auth": shortAuth]],
                        .badRequest, "bad_key", "pushChannel.auth"
                    ),
                    (
                        "no keys", ["Platform": "webpush", "Subscription": ["endpoint": Self.endpoint]], .badRequest, "missing_field",
                        "keys"
                    ),
                    (
                        "both shapes", ["Platform": "webpush", "Subscription": subscription(), "pushChannel": ["endpoint": Self.endpoint]],
                        .badRequest, "wrong_type", "not both"
                    ),
                    (
                        "another handle", ["Platform": "webpush", "Handle": "https://elsewhere.example/x", "Subscription": subscription()],
                        .unprocessableContent, "handle_not_endpoint", "endpoint"
                    ),
                    (
                        "subscription on apns",
                        ["Platform": "apns", "Handle": String(repeating: "ab", count: 32), "Subscription": subscription()],
                        .unprocessableContent, "subscription_not_webpush", "webpush"
                    ),
                ]
                for (name, body, status, code, words) in cases {
                    let response = try await Self.put(client, "web-bad", body)
                    #expect(
                        response.status == status && response.errorCode == code && response.errorMessage.contains(words),
                        "\(name): \(response.status) \(response.errorCode ?? "-") \(response.errorMessage)")
                }
            }
            #expect(try await RedisInstallationStore(redis: fixture.redis, keys: fixture.keys).installations(ids: ["web-bad"]).isEmpty)
        }
    }
}
