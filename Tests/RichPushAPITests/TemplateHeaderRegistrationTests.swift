import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// A template's `Headers` at registration: each name the device's platform takes (APNs'
/// `apns-priority`, `apns-push-type`, `apns-expiration`, `apns-collapse-id`; Web Push's `TTL`,
/// `Urgency`, `Topic`), a literal value checked now and an expression compiled now; anything else
/// is a 400 `invalid_header` naming the header, on `PUT` and on the `PATCH` of one template.
@Suite("Template headers, registration")
struct TemplateHeaderRegistrationTests {
    static let alert = #"{"aps":{"alert":"$(title)"}}"#
    static let background = #"{"aps":{"content-available":1},"t":"$(title)"}"#

    static func put(
        _ client: any TestClientProtocol, _ id: String, platform: String = "apns", body: String = alert,
        headers: [String: String]
    ) async throws -> TestResponse {
        var registration: [String: Any] = ["Platform": platform, "Templates": ["main": ["Body": body, "Headers": headers]]]
        switch platform {
        case "webpush":
            let keys = TestCredentials.webPushKeys()
            registration["Subscription"] = [
                "endpoint": "https://push.example.net/wpush/\(id)", "keys": ["p256dh": keys.p256dh, "auth": keys.auth],
            ]
        case "fcm":
            registration["Handle"] = "fcm-token-\(id)"
        default:
            registration["Handle"] = "apns-\(id)"
        }
        return try await client.execute(
            uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("alice") + [.contentType: "application/json"],
            body: APIFixture.json(registration))
    }

    @Test func eachPlatformTakesItsHeadersAndRefusesTheRestByName() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let store = RedisInstallationStore(redis: fixture.redis, keys: fixture.keys)
            try await fixture.test { client in
                let accepted: [(String, String, String, [String: String])] = [
                    (
                        "a1", "apns", Self.alert,
                        ["apns-priority": "$(priority)", "APNS-Collapse-Id": "{'news-' + $(richId)}", "apns-expiration": "0"]
                    ),
                    ("a2", "apns", Self.background, ["apns-push-type": "background"]),
                    ("w1", "webpush", Self.background, ["TTL": "60", "Urgency": "$(urgency)", "Topic": "scores"]),
                ]
                for (id, platform, body, headers) in accepted {
                    let response = try await Self.put(client, id, platform: platform, body: body, headers: headers)
                    #expect(response.status == .ok, "\(id): \(String(buffer: response.body))")
                }
                #expect(
                    try await store.installation(id: "w1")?.templates.first?.headers == [
                        "TTL": "60", "Urgency": "$(urgency)", "Topic": "scores",
                    ])

                let refused: [(String, String, String, [String: String], [String])] = [
                    ("unknown", "apns", Self.alert, ["apns-topic": "com.other.app"], ["'apns-topic'", "apns-priority"]),
                    ("request's own", "apns", Self.alert, ["Authorization": "bearer x"], ["'Authorization'"]),
                    ("web header on apns", "apns", Self.alert, ["TTL": "60"], ["'TTL'"]),
                    ("apns header on web", "webpush", Self.background, ["apns-priority": "10"], ["'apns-priority'", "TTL"]),
                    ("any on fcm", "fcm", #"{"data":{"t":"$(title)"}}"#, ["TTL": "60"], ["'TTL'", "android.ttl"]),
                    ("bad priority", "apns", Self.alert, ["apns-priority": "7"], ["'apns-priority'", "5 or 10"]),
                    ("bad push type", "apns", Self.alert, ["apns-push-type": "voip"], ["'apns-push-type'"]),
                    ("bad expiration", "apns", Self.alert, ["apns-expiration": "soon"], ["'apns-expiration'"]),
                    (
                        "background at 10", "apns", Self.background, ["apns-push-type": "background", "apns-priority": "10"],
                        ["background", "priority 5"]
                    ),
                    (
                        "long collapse id", "apns", Self.alert, ["apns-collapse-id": String(repeating: "c", count: 65)],
                        ["'apns-collapse-id'"]
                    ),
                    ("bad TTL", "webpush", Self.background, ["TTL": "-1"], ["'TTL'"]),
                    ("TTL past 28 days", "webpush", Self.background, ["TTL": "2419201"], ["'TTL'"]),
                    ("bad urgency", "webpush", Self.background, ["Urgency": "urgent"], ["'Urgency'"]),
                    ("bad topic", "webpush", Self.background, ["Topic": "a topic!"], ["'Topic'"]),
                    (
                        "expression mixed with text", "apns", Self.alert, ["apns-collapse-id": "news-$(richId)"],
                        ["'apns-collapse-id'", "expression_mixed_with_text"]
                    ),
                    ("twice", "apns", Self.alert, ["apns-priority": "10", "APNS-PRIORITY": "5"], ["twice"]),
                ]
                for (name, platform, body, headers, words) in refused {
                    let response = try await Self.put(client, "bad", platform: platform, body: body, headers: headers)
                    #expect(
                        response.status == .badRequest && response.errorCode == "invalid_header",
                        "\(name): \(response.status) \(response.errorMessage)")
                    for word in words { #expect(response.errorMessage.contains(word), "\(name): \(word) in \(response.errorMessage)") }
                }
                #expect(try await store.installation(id: "bad") == nil, "nothing refused was stored")

                // The PATCH of one template checks them against the registration's platform too.
                let patch = try await client.execute(
                    uri: "/api/register/w1/templates/main", method: .patch,
                    headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: APIFixture.json(["Body": Self.background, "Headers": ["apns-priority": "10"]]))
                #expect(
                    patch.status == .badRequest && patch.errorCode == "invalid_header" && patch.errorMessage.contains("'apns-priority'"),
                    "\(patch.errorMessage)")
                #expect(
                    try await store.installation(id: "w1")?.templates.first?.headers["TTL"] == "60", "the refused PATCH changed nothing")
            }
        }
    }
}
