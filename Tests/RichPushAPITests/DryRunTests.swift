import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import Testing

/// `POST /api/notifications?dryRun=true`: the audience per platform and each platform's payload,
/// with nothing written to Redis.
@Suite("Dry run")
struct DryRunTests {
    /// Every key and a summary of its value, to compare before and after.
    static func snapshot(_ redis: RedisConnectionPool) async throws -> [String: String] {
        var result: [String: String] = [:]
        for key in try await redis.send("KEYS", "*").array?.compactMap(\.string) ?? [] {
            let type = try await redis.send("TYPE", key).string ?? "?"
            let value: RedisValue =
                switch type {
                case "string": try await redis.send("GET", key)
                case "hash": try await redis.send("HGETALL", key)
                case "set": try await redis.send("SMEMBERS", key)
                case "zset": try await redis.send("ZRANGE", key, "0", "-1", "WITHSCORES")
                case "stream": try await redis.send("XLEN", key)
                default: try await redis.send("TYPE", key)
                }
            result[key] = "\(type) \(value)"
        }
        return result
    }

    @Test func theAudienceAndPayloadsPerPlatformAndNoKeyWritten() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                for (handle, platform) in [("ios-1", "apns"), ("ios-2", "apns"), ("android1:APA91b-x", "fcm")] {
                    let id = try await client.execute(
                        uri: "/api/register?handle=\(handle)", method: .post, headers: APIFixture.basic("alice")
                    ) {
                        try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                    }
                    try await client.execute(
                        uri: "/api/register/\(id)", method: .put, headers: json,
                        body: APIFixture.json(["Platform": platform, "Handle": handle])
                    ) { #expect($0.status == .ok) }
                }
                let before = try await Self.snapshot(fixture.redis)
                let response = try await client.execute(
                    uri: "/api/notifications?dryRun=true", method: .post, headers: json,
                    body: APIFixture.json(["message": "Goal!", "richType": "text", "payload": "2-1", "collapseId": "score"]))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let after = try await Self.snapshot(fixture.redis)
                #expect(
                    before == after,
                    "a dry run wrote: \(Set(after.keys).symmetricDifference(before.keys)) and changed \(before.filter { after[$0.key] != $0.value }.keys)"
                )
                let view = response.json
                #expect(view["dryRun"] as? Bool == true && view["target"] as? String == "username:alice")
                let audience = try #require(view["audience"] as? [String: Any])
                #expect(
                    audience["total"] as? Int == 3 && audience["platforms"] as? [String: Int] == ["apns": 2, "fcm": 1]
                        && audience["exact"] as? Bool == true)
                let payloads = try #require(view["payloads"] as? [[String: Any]])
                #expect(payloads.compactMap { $0["platform"] as? String } == ["apns", "fcm"])
                for payload in payloads {
                    #expect(payload["collapseId"] as? String == "score")
                    #expect((payload["bytes"] as? Int ?? 0) > 0 && payload["limit"] as? Int == 4096)
                    #expect((payload["payload"] as? String)?.contains("Goal!") == true)
                }
                // Nothing was created.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect((response.json["notifications"] as? [Any])?.isEmpty == true)
                }
                // Its checks are a send's: a bad option, a bad flag.
                let bad = try await client.execute(
                    uri: "/api/notifications?dryRun=true", method: .post, headers: json,
                    body: APIFixture.json(["richType": "text", "payload": "p", "priority": "urgent"]))
                #expect(bad.status == .unprocessableContent && bad.errorCode == "bad_priority")
                let flag = try await client.execute(
                    uri: "/api/notifications?dryRun=maybe", method: .post, headers: json,
                    body: APIFixture.json(["richType": "text", "payload": "p"]))
                #expect(flag.status == .badRequest && flag.errorCode == "bad_dry_run")
                // Nobody to send to: said so.
                let nobody = try await client.execute(
                    uri: "/api/notifications?dryRun=true", method: .post,
                    headers: APIFixture.basic("bob") + [.contentType: "application/json"],
                    body: APIFixture.json(["richType": "text", "payload": "p"]))
                #expect((nobody.json["lint"] as? [String])?.contains { $0.hasPrefix("no installation matches") } == true)
            }
        }
    }

    @Test func aTemplateSendPreviewsEachGroupOfTemplatedDevices() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let body = #"{"aps":{"alert":"$(title)"},"id":"$(richId)","s":"$(subtitle)"}"#
                let devices: [(String, String?, [String: Any]?)] = [
                    ("fr-1", "fr-CA", ["Body": body, "Defaults": ["subtitle": "-"]]),
                    ("fr-2", "fr-CA", ["Body": body, "Defaults": ["subtitle": "-"]]),
                    ("en-1", "en", ["Body": body, "Defaults": ["subtitle": "-"]]), ("strict", "en", ["Body": body, "Missing": "fail"]),
                    ("plain", nil, nil),
                ]
                for (id, locale, template) in devices {
                    var registration: [String: Any] = ["Platform": "apns", "Handle": "h-\(id)"]
                    if let locale { registration["Locale"] = locale }
                    if let template { registration["Templates"] = ["main": template] }
                    let response = try await client.execute(
                        uri: "/api/register/\(id)", method: .put, headers: json, body: APIFixture.json(registration))
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                }
                let before = try await Self.snapshot(fixture.redis)
                let response = try await client.execute(
                    uri: "/api/notifications?dryRun=true", method: .post, headers: json,
                    body: APIFixture.json([
                        "richType": "text", "payload": "p", "properties": ["title": ["en": "Goal!", "fr": "But !"]],
                    ]))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                #expect(try await Self.snapshot(fixture.redis) == before, "a dry run writes nothing")
                let previews = try #require(response.json["templates"] as? [[String: Any]])
                #expect(previews.count == 3, "\(previews)")
                let french = try #require(previews.first { $0["deviceLocale"] as? String == "fr-CA" })
                #expect(french["devices"] as? Int == 2 && french["locale"] as? String == "fr" && french["template"] as? String == "main")
                #expect(french["payload"] as? String == #"{"aps":{"alert":"But !"},"id":"0","s":"-"}"#, "\(french)")
                let strict = try #require(previews.first { ($0["error"] as? String) != nil })
                #expect(
                    strict["devices"] as? Int == 1 && (strict["error"] as? String)?.hasPrefix("template_missing_property") == true,
                    "\(strict)")
                #expect((response.json["lint"] as? [String])?.contains { $0.hasPrefix("1 templated devices would fail") } == true)
                #expect(
                    (response.json["audience"] as? [String: Any])?["total"] as? Int == 5,
                    "the plain device is in the audience, not among the previews")
                // Without properties there is no preview.
                let plain = try await client.execute(
                    uri: "/api/notifications?dryRun=true", method: .post, headers: json,
                    body: APIFixture.json(["richType": "text", "payload": "p"]))
                #expect(plain.json["templates"] == nil)
            }
        }
    }
}
