import Foundation
import Hiredis
import RedisTestSupport
import RichPushApps
import RichPushCore
import RichPushStorage
import Testing

/// Issue 32, the locale each device got: the chain exact → language → the app's default locale →
/// the first given, on real Redis through the API and a worker, with the locale chosen and the
/// template's name in each device's status entry; and Notification Hubs' own localization
/// (`$(News_French)`: one plain property per language, each template naming its own).
@Suite("Template locales, fleet", .serialized)
struct TemplateLocaleFleetTests {
    static let apns = #"{"aps":{"alert":{"title":"$(title)","body":"$(body)"}}}"#

    @Test func theChainEndsAtTheAppsDefaultAndTheStatusNamesTheLocale() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                // The default app's default locale: German, which no device asks for by name.
                let apps = RedisAppStore(redis: pipeline.redis, keys: AppKeys(prefix: pipeline.prefix), ring: nil)
                _ = try await apps.update(id: .default, change: AppChange(defaultLocale: .some(LocaleTag("de"))))
                let devices: [(id: String, locale: String?, body: String)] = [
                    ("exact", "fr-CA", Self.apns), ("language", "fr-FR", Self.apns), ("unknown", "ja", Self.apns), ("none", nil, Self.apns),
                    // Notification Hubs' form: each device's template names its language's property.
                    ("nh-fr", nil, #"{"aps":{"alert":"$(News_French)"}}"#), ("nh-en", nil, #"{"aps":{"alert":"$(news_english)"}}"#),
                ]
                var handles: [String: String] = [:]
                for device in devices {
                    let handle = "loc-\(device.id)-\(UUID().uuidString.prefix(8))"
                    handles[device.id] = handle
                    var body: [String: Any] = ["Platform": "apns", "Handle": handle, "Templates": ["main": ["Body": device.body]]]
                    if let locale = device.locale { body["Locale"] = locale }
                    let (status, answer) = try await pipeline.call("PUT", "api/register/\(device.id)", json: body)
                    #expect(status == 200, "\(device.id): \(answer)")
                }
                #expect(
                    try await pipeline.call(
                        "PUT", "api/register/plain", json: ["Platform": "apns", "Handle": "loc-plain-\(UUID().uuidString.prefix(8))"]
                    ).status == 200)
                let id = try await withWorker(pipeline.worker()) {
                    let id = try await pipeline.send(json: [
                        "richType": "text", "payload": "rich",
                        "properties": [
                            "title": ["en": "Hello", "fr": "Bonjour", "fr-CA": "Allo", "de": "Hallo"], "body": "42",
                            "News_French": "Les nouvelles", "News_English": "The news",
                        ] as [String: Any],
                    ])
                    try await waitUntil(timeout: .seconds(60), "every device held") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == devices.count + 1
                    }
                    return id
                }
                let expected = ["exact": "Allo", "language": "Bonjour", "unknown": "Hallo", "none": "Hallo"]
                for (device, title) in expected {
                    let payload = try #require(
                        try await TemplateFleetTests.held(pipeline, handle: handles[device]!), "\(device) has a held push")
                    #expect(payload["aps"]?["alert"]?["title"]?.string == title, "\(device): \(payload)")
                }
                #expect(try await TemplateFleetTests.held(pipeline, handle: handles["nh-fr"]!)?["aps"]?["alert"]?.string == "Les nouvelles")
                #expect(
                    try await TemplateFleetTests.held(pipeline, handle: handles["nh-en"]!)?["aps"]?["alert"]?.string == "The news",
                    "property names are not case-sensitive")

                let rows = (try await pipeline.status(id)["devices"] as? [[String: Any]] ?? [])
                    .reduce(into: [String: [String: Any]]()) { $0[$1["installation"] as? String ?? ""] = $1 }
                let locales = ["exact": "fr-CA", "language": "fr", "unknown": "de", "none": "de"]
                for (device, locale) in locales {
                    #expect(
                        rows[device]?["locale"] as? String == locale && rows[device]?["template"] as? String == "main",
                        "\(device): \(rows[device] ?? [:])")
                }
                // The title is localized: the Notification Hubs devices took theirs by the chain too,
                // though their templates name only plain properties.
                #expect(rows["nh-fr"]?["template"] as? String == "main")
                #expect(
                    rows["plain"]?["locale"] == nil && rows["plain"]?["template"] == nil,
                    "the plain push names no template: \(rows["plain"] ?? [:])")
                #expect(rows["plain"]?["state"] as? String == "held")
            }
        }
    }
}
