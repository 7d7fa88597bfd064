import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import Testing

@testable import RichPushStorage

/// `PUT /api/register/{id}` with NH's `Templates` and a `Locale`: compiled at registration (an
/// error names the template, the JSON pointer and the column), stored in the installation's hash
/// (a hash written before templates existed reads as before), shown back.
@Suite("Template registrations")
struct TemplateRegistrationTests {
    static let body = #"{"aps":{"alert":{"title":"$(title)","body":".(body, 120)"}}}"#

    @Test func templatesAndLocaleAreStoredAndShown() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let store = RedisInstallationStore(redis: fixture.redis, keys: fixture.keys)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let templates: [String: Any] = [
                    "alert": ["Body": Self.body, "Headers": ["apns-priority": "10"], "Tags": ["sports"], "Missing": "fail"],
                    "quiet": ["Body": #"{"aps":{"content-available":1},"t":"$(title)"}"#, "Defaults": ["title": "News"]],
                ]
                let response = try await client.execute(
                    uri: "/api/register/t1", method: .put, headers: json,
                    body: APIFixture.json(["Platform": "apns", "Handle": "h1", "Locale": "fr_ca", "Templates": templates]))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                #expect(response.json["Locale"] as? String == "fr-CA")
                let shown = try #require(response.json["Templates"] as? [String: Any])
                #expect((shown["alert"] as? [String: Any])?["Missing"] as? String == "fail")
                #expect((shown["quiet"] as? [String: Any])?["Defaults"] as? [String: String] == ["title": "News"])
                let stored = try #require(try await store.installation(id: "t1"))
                #expect(stored.locale == "fr-CA")
                #expect(stored.templates.map(\.name) == ["alert", "quiet"])
                #expect(
                    stored.templates[0]
                        == InstallationTemplate(
                            name: "alert", body: Self.body, headers: ["apns-priority": "10"], tags: ["sports"], missing: .fail))
                // Registered again without them: the fields go, and the hash has the old shape.
                _ = try await client.execute(
                    uri: "/api/register/t1", method: .put, headers: json, body: APIFixture.json(["Platform": "apns", "Handle": "h1"]))
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.installation("t1"), "templates").int == 0)
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.installation("t1"), "locale").int == 0)
                let plain = try #require(try await store.installation(id: "t1"))
                #expect(plain.templates.isEmpty && plain.locale == nil)
            }
        }
    }

    @Test func eachMistakeIsRefusedWithItsCode() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let many = Dictionary(uniqueKeysWithValues: (0..<9).map { ("t\($0)", ["Body": Self.body] as [String: Any]) })
                let big = String(repeating: "x", count: 9000)
                let cases: [([String: Any], String, [String])] = [
                    (
                        ["Templates": ["news": ["Body": #"{"aps":{"alert":"Some other text. $(message)"}}"#]]], "invalid_template",
                        ["'news'", "expression_mixed_with_text", "'/aps/alert'", "line 1, column 35"]
                    ),
                    (
                        ["Templates": ["news": ["Body": #"{"aps":{"badge":#(n)}}"#]]], "invalid_template",
                        ["'news'", "/aps/badge", "column"]
                    ),
                    (["Templates": ["bad name": ["Body": Self.body]]], "invalid_template", ["bad name"]),
                    (["Templates": many], "too_many_templates", ["8"]),
                    (
                        ["Templates": ["a": ["Body": "{\"a\":\"\(big)\"}"], "b": ["Body": "{\"b\":\"\(big)\"}"]]], "invalid_template",
                        ["16384"]
                    ),
                    (["Templates": ["news": ["Headers": [:]]]], "missing_field", ["'news'", "Body"]),
                    (["Templates": ["news": ["Body": Self.body, "Missing": "empty"]]], "wrong_type", ["fallback"]),
                    (["Templates": ["news": ["Body": Self.body, "Color": "red"]]], "unknown_field", ["Color"]),
                    (
                        ["Templates": ["news": ["Body": Self.body, "Defaults": ["Title": "a", "title": "b"]]]], "invalid_template", ["case"]
                    ),
                    (["Templates": "news"], "wrong_type", ["Templates"]),
                    (["Locale": "français"], "invalid_locale", ["BCP 47"]),
                    (["Locale": "f"], "invalid_locale", ["BCP 47"]),
                ]
                for (extra, code, words) in cases {
                    let body = extra.merging(["Platform": "apns", "Handle": "h"]) { first, _ in first }
                    let response = try await client.execute(
                        uri: "/api/register/bad", method: .put, headers: json, body: APIFixture.json(body))
                    #expect(response.status == .badRequest, "\(extra.keys.sorted())")
                    #expect(response.errorCode == code, "\(response.errorMessage)")
                    for word in words { #expect(response.errorMessage.contains(word), "\(word) in \(response.errorMessage)") }
                }
            }
        }
    }

    @Test func aHashWrittenBeforeTemplatesReadsAsBefore() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let store = RedisInstallationStore(redis: fixture.redis, keys: fixture.keys)
            try await fixture.redis.send(
                "HSET", fixture.keys.installation("old"), "platform", "apns", "handle", "h-old", "tags", "[\"username:alice\"]",
                "owner", "alice", "updated", "1")
            let old = try #require(try await store.installation(id: "old"))
            #expect(old.templates.isEmpty && old.locale == nil && old.handle == "h-old")
        }
    }
}

/// `PATCH /api/register/{id}/templates/{name}`: one template set, the rest kept.
@Suite("Template patch")
struct TemplatePatchTests {
    @Test func oneTemplateIsAddedOrReplacedAndTheRestKept() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let store = RedisInstallationStore(redis: fixture.redis, keys: fixture.keys)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let put = try await client.execute(
                    uri: "/api/register/p1", method: .put, headers: json,
                    body: APIFixture.json(
                        [
                            "Platform": "apns", "Handle": "hp", "Locale": "de", "Tags": ["news"],
                            "Templates": ["a": ["Body": TemplateRegistrationTests.body]],
                        ]))
                #expect(put.status == .ok)
                func patch(_ path: String, _ body: String, as user: String = "alice") async throws -> TestResponse {
                    try await client.execute(
                        uri: "/api/register/\(path)", method: .patch, headers: APIFixture.basic(user) + [.contentType: "application/json"],
                        body: ByteBuffer(string: body))
                }
                let added = try await patch("p1/templates/b", #"{"Body": "{\"t\":\"$(title)\"}", "Missing": "fail"}"#)
                #expect(added.status == .ok, "\(String(buffer: added.body))")
                #expect((added.json["Templates"] as? [String: Any])?.keys.sorted() == ["a", "b"])
                let replaced = try await patch("p1/templates/a", #"{"Body": "{\"x\":\"$(y)\"}"}"#)
                #expect(replaced.status == .ok)
                let stored = try #require(try await store.installation(id: "p1"))
                #expect(stored.templates.map(\.body) == [#"{"x":"$(y)"}"#, #"{"t":"$(title)"}"#])
                #expect(stored.locale == "de" && stored.tags.contains("news") && stored.handle == "hp")
                let invalid = try await patch("p1/templates/a", #"{"Body": "{\"x\":\"Hi $(y)\"}"}"#)
                #expect(invalid.status == .badRequest && invalid.errorCode == "invalid_template" && invalid.errorMessage.contains("'/x'"))
                #expect(try await patch("p1/templates/bad%20name", #"{"Body": "{}"}"#).errorCode == "invalid_template")
                #expect(try await patch("nobody/templates/a", #"{"Body": "{}"}"#).status == .notFound)
                #expect(try await patch("p1/templates/a", #"{"Body": "{}"}"#, as: "bob").status == .notFound)
                #expect(try await store.installation(id: "p1")?.templates.first?.body == #"{"x":"$(y)"}"#, "refusals change nothing")
            }
        }
    }
}
