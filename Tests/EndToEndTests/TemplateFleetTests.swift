import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 32 end to end: a mixed fleet (iOS and Android in three languages, one device with a
/// locale no property has) registers templates through the API; one send with localized
/// properties gives each device its own payload in its own language, held by the simulated hub
/// (no device is online); a `fail` template missing a property and a template rendering over
/// the APNs limit fail their device alone, with the reason in the status.
@Suite("Template fleet", .serialized)
struct TemplateFleetTests {
    static let apns = #"{"aps":{"alert":{"title":"$(title)","body":"{$(body) + ' #' + $(richId)}"}},"richType":"$(richType)"}"#
    static let fcm = #"{"data":{"title":"$(title)","body":"$(body)","richId":"$(richId)","richUrl":"$(richUrl)"}}"#

    struct Device {
        let id: String
        let platform: String
        let locale: String?
        let body: String
        var missing = "fallback"
    }

    /// The payload the hub holds for `handle` (one push each here), as JSON.
    static func held(_ pipeline: Pipeline, handle: String) async throws -> JSONValue? {
        let values =
            try await pipeline.redis.send("HVALS", OfflineStore(prefix: pipeline.prefix).key(handle)).array?.compactMap(\.bytes) ?? []
        guard let value = values.first, let bar = value.firstIndex(of: UInt8(ascii: "|")) else { return nil }
        return JSONValue.parse(Array(value[(bar + 1)...]))?["payload"]
    }

    static func post(_ pipeline: Pipeline, _ body: String) async throws -> Int {
        var request = URLRequest(url: pipeline.baseURL.appendingPathComponent("api/notifications"))
        request.httpMethod = "POST"
        request.setValue("Basic " + Data("alice:alice-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let id = (object?["id"] as? String).flatMap { Int($0) }
        return try #require(id, "\(String(decoding: data, as: UTF8.self))")
    }

    @Test func oneSendGivesEachDeviceItsOwnPayloadInItsLanguage() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let devices = [
                    Device(id: "ios-en", platform: "apns", locale: "en-US", body: Self.apns),
                    Device(id: "ios-fr", platform: "apns", locale: "fr_CA", body: Self.apns),
                    Device(id: "ios-de", platform: "apns", locale: "de", body: Self.apns),
                    Device(id: "and-en", platform: "fcm", locale: "en", body: Self.fcm),
                    Device(id: "and-fr", platform: "fcm", locale: "fr-FR", body: Self.fcm),
                    Device(id: "and-de", platform: "fcm", locale: "de-CH", body: Self.fcm),
                    Device(id: "and-ja", platform: "fcm", locale: "ja", body: Self.fcm),
                    Device(
                        id: "ios-strict", platform: "apns", locale: "en", body: #"{"aps":{"alert":"$(title)"},"s":"$(subtitle)"}"#,
                        missing: "fail"),
                    Device(id: "ios-big", platform: "apns", locale: "en", body: #"{"aps":{"alert":"$(title)"},"pad":"$(padding)"}"#),
                ]
                var handles: [String: String] = [:]
                for device in devices {
                    let handle = "tpl-\(device.id)-\(UUID().uuidString.prefix(8))"
                    handles[device.id] = handle
                    var body: [String: Any] = [
                        "Platform": device.platform, "Handle": handle,
                        "Templates": ["main": ["Body": device.body, "Missing": device.missing]],
                    ]
                    if let locale = device.locale { body["Locale"] = locale }
                    let (status, answer) = try await pipeline.call("PUT", "api/register/\(device.id)", json: body)
                    #expect(status == 200, "\(device.id): \(answer)")
                }
                let plainHandle = "tpl-plain-\(UUID().uuidString.prefix(8))"
                #expect(
                    try await pipeline.call("PUT", "api/register/plain", json: ["Platform": "apns", "Handle": plainHandle]).status == 200)

                let padding = String(repeating: "p", count: 4200)
                let id = try await withWorker(pipeline.worker()) {
                    let id = try await Self.post(
                        pipeline,
                        #"{"richType": "text", "payload": "rich", "properties": {"#
                            + #""title": {"en": "Hello", "fr": "Bonjour", "fr-CA": "Allo", "de": "Hallo"}, "#
                            + #""body": {"en": "Goal!", "fr": "But !", "de": "Tor!"}, "padding": "\#(padding)"}}"#)
                    try await waitUntil(timeout: .seconds(60), "every device held or failed") {
                        let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
                        return (counts["held"] ?? 0) + (counts["failed"] ?? 0) == devices.count + 1
                    }
                    return id
                }
                let expected: [(String, String, String)] = [
                    ("ios-en", "Hello", "Goal!"), ("ios-fr", "Allo", "But !"), ("ios-de", "Hallo", "Tor!"),
                    ("and-en", "Hello", "Goal!"), ("and-fr", "Bonjour", "But !"), ("and-de", "Hallo", "Tor!"), ("and-ja", "Hello", "Goal!"),
                ]
                for (device, title, body) in expected {
                    let payload = try #require(try await Self.held(pipeline, handle: handles[device]!), "\(device) has a held push")
                    if device.hasPrefix("ios") {
                        #expect(payload["aps"]?["alert"]?["title"]?.string == title, "\(device): \(payload)")
                        #expect(payload["aps"]?["alert"]?["body"]?.string == "\(body) #\(id)", "\(device): \(payload)")
                        #expect(payload["richType"]?.string == "text")
                    } else {
                        #expect(
                            payload["data"]?["title"]?.string == title && payload["data"]?["body"]?.string == body, "\(device): \(payload)")
                        #expect(payload["data"]?["richId"]?.string == String(id))
                        #expect(payload["data"]?["richUrl"]?.string?.hasSuffix("/api/notifications/\(id)") == true)
                    }
                }
                let plain = try #require(try await Self.held(pipeline, handle: plainHandle))
                #expect(plain["richId"]?.string == String(id) && plain["aps"]?["content-available"] != nil, "no templates: today's payload")
                let status = try await pipeline.status(id)
                let rows = (status["devices"] as? [[String: Any]] ?? []).reduce(into: [String: [String: Any]]()) {
                    $0[$1["installation"] as? String ?? ""] = $1
                }
                #expect(
                    (rows["ios-strict"]?["error"] as? String)?.hasPrefix("template_missing_property") == true,
                    "\(rows["ios-strict"] ?? [:])")
                #expect((rows["ios-big"]?["error"] as? String)?.hasPrefix("payload_too_large") == true, "\(rows["ios-big"] ?? [:])")
                #expect(try await Self.held(pipeline, handle: handles["ios-strict"]!) == nil)
                #expect(try await Self.held(pipeline, handle: handles["ios-big"]!) == nil)
                #expect((status["counts"] as? [String: Int])?["held"] == 8)
            }
        }
    }
}
