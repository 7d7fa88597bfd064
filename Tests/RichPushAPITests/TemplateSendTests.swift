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

/// `POST /api/notifications` with `properties` (and NH's `ServiceBusNotification-Format:
/// template`): stored with the record, in order, bounded; and `POST /api/templates/render`.
@Suite("Template sends and the render route")
struct TemplateSendTests {
    @Test func propertiesAreStoredWithTheRecordInOrder() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let body =
                    #"{"richType": "text", "payload": "p", "properties": {"title": {"fr-CA": "Allo", "en": "Hi", "fr": "Salut"}, "badge": 3}}"#
                let response = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: json, body: ByteBuffer(string: body))
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
                let id = try #require(Int(response.json["id"] as? String ?? ""))
                let record = try #require(try await fixture.ledger.notifications(ids: [id]).first)
                let properties = try #require(record.properties)
                #expect(properties.properties.map(\.name) == ["title", "badge"])
                #expect(properties.values(for: "ja").values["title"] == "Allo", "the first given, as given")
                #expect(properties.values(for: "fr-FR").values["title"] == "Salut")
                #expect(properties.values(for: nil).values["badge"] == "3")
                // NH's form: the body is the properties alone; the rich push is the default image.
                let nh = json + [HTTPField.Name("ServiceBusNotification-Format")!: "template"]
                let sent = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: nh, body: ByteBuffer(string: #"{"title": "Hi"}"#))
                #expect(sent.status == .accepted, "\(String(buffer: sent.body))")
                let nhID = try #require(Int(sent.json["id"] as? String ?? ""))
                let nhRecord = try #require(try await fixture.ledger.notifications(ids: [nhID]).first)
                #expect(nhRecord.properties?.values(for: nil).values == ["title": "Hi"] && nhRecord.richType == .image)
                // A plain send has none, and no field.
                let plain = try await client.sendImage("alice")
                let plainID = try #require(Int(plain.json["id"] as? String ?? ""))
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.notification(plainID), "properties").int == 0)
            }
        }
    }

    @Test func badPropertiesAreRefused() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let many = "{" + (0..<65).map { "\"p\($0)\": \"v\"" }.joined(separator: ",") + "}"
                let cases: [(String, HTTPFields, String)] = [
                    (#"{"richType":"text","payload":"p","properties":{"bad name":"x"}}"#, json, "invalid_properties"),
                    (#"{"richType":"text","payload":"p","properties":{"t":{"english":"x"}}}"#, json, "invalid_properties"),
                    (#"{"richType":"text","payload":"p","properties":{"t":{}}}"#, json, "invalid_properties"),
                    (#"{"richType":"text","payload":"p","properties":{"t":["x"]}}"#, json, "invalid_properties"),
                    (#"{"richType":"text","payload":"p","properties":{"T":"a","t":"b"}}"#, json, "invalid_properties"),
                    (#"{"richType":"text","payload":"p","properties":"x"}"#, json, "invalid_properties"),
                    ("{\"richType\":\"text\",\"payload\":\"p\",\"properties\":\(many)}", json, "invalid_properties"),
                    (
                        "{\"richType\":\"text\",\"payload\":\"p\",\"properties\":{\"t\":\"\(String(repeating: "x", count: 17000))\"}}",
                        json, "invalid_properties"
                    ),
                    (#"{"t": "x"}"#, json + [HTTPField.Name("ServiceBusNotification-Format")!: "apple"], "unsupported_format"),
                ]
                for (body, headers, code) in cases {
                    let response = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: headers, body: ByteBuffer(string: body))
                    #expect(
                        response.status == .badRequest && response.errorCode == code,
                        "\(body.prefix(80)): \(String(buffer: response.body).prefix(200))")
                }
            }
        }
    }

    @Test func aBatchTakesPropertiesPerItemInOrder() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let batch =
                    #"{"notifications": ["#
                    + #"{"richType":"text","payload":"p","properties":{"title":{"fr-CA":"Allo","en":"Hi","fr":"Salut"},"n":2}},"#
                    + #"{"richType":"text","payload":"p"},"#
                    + #"{"richType":"text","payload":"p","Properties":{"title":"Plain"}},"#
                    + #"{"richType":"text","payload":"p","properties":{"bad name":"x"}},"#
                    + #"{"richType":"text","payload":"p","properties":"x"}]}"#
                let response = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: json, body: ByteBuffer(string: batch))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let results = response.json["results"] as? [[String: Any]] ?? []
                #expect(results.compactMap { $0["httpStatus"] as? Int } == [202, 202, 202, 400, 400], "\(results)")
                #expect(
                    results.compactMap { ($0["error"] as? [String: Any])?["code"] as? String } == [
                        "invalid_properties", "invalid_properties",
                    ])
                let ids = results.prefix(3).compactMap { ($0["id"] as? String).flatMap(Int.init) }
                #expect(ids.count == 3)
                let records = try await fixture.ledger.notifications(ids: ids)
                let first = try #require(records.first { $0.id == ids[0] }?.properties)
                #expect(first.properties.map(\.name) == ["title", "n"])
                #expect(first.values(for: "ja").values["title"] == "Allo", "the first given, as the item gave them")
                #expect(first.values(for: "fr-BE").values["title"] == "Salut")
                #expect(records.first { $0.id == ids[1] }?.properties == nil, "an item without properties is a plain push")
                #expect(records.first { $0.id == ids[2] }?.properties?.values(for: nil).values == ["title": "Plain"])
            }
        }
    }

    @Test func theRenderRoutePreviewsWithoutSending() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                func render(_ body: String, headers: HTTPFields? = nil) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/api/templates/render", method: .post, headers: headers ?? json, body: ByteBuffer(string: body))
                }
                let ok = try await render(
                    ##"{"template": "{\"aps\":{\"alert\":\".(title, 10)\",\"badge\":\"#(n)\"}}", "locale": "fr_CA", "##
                        + #""properties": {"title": {"en": "Hello world again", "fr": "Bonjour tout le monde"}, "n": "4"}}"#)
                #expect(ok.status == .ok, "\(String(buffer: ok.body))")
                #expect(ok.json["locale"] as? String == "fr")
                let output = try #require(ok.json["output"] as? [String: Any])
                #expect((output["aps"] as? [String: Any])?["alert"] as? String == "Bonjour...")
                #expect((output["aps"] as? [String: Any])?["badge"] as? Int == 4)
                let warnings = try #require(ok.json["warnings"] as? [[String: Any]])
                #expect(warnings.map { $0["code"] as? String } == ["truncated"])
                let fallback = try await render(#"{"template": "{\"a\":\"$(x)\"}", "defaults": {"x": "d"}}"#)
                #expect((fallback.json["output"] as? [String: Any])?["a"] as? String == "d")
                #expect((fallback.json["warnings"] as? [[String: Any]])?.first?["code"] as? String == "default_used")
                let invalid = try await render(#"{"template": "{\"a\":\"Some text $(x)\"}"}"#)
                #expect(
                    invalid.status == .badRequest && invalid.errorCode == "invalid_template" && invalid.errorMessage.contains("/a"),
                    "\(invalid.errorMessage)")
                let missing = try await render(#"{"template": "{\"a\":\"$(x)\"}", "missing": "fail"}"#)
                #expect(missing.status == .unprocessableContent && missing.errorCode == "template_missing_property")
                let noAuth = try await render(#"{"template": "{}"}"#, headers: [.contentType: "application/json"])
                #expect(noAuth.status == .unauthorized)
            }
        }
    }
}
