import APITestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import Testing

/// `ttl`, `collapseId`, `priority` and `delivery` on `POST /api/notifications`: kept with the
/// record, bounded.
@Suite("Delivery options")
struct DeliveryOptionsTests {
    static let json = APIFixture.basic("alice") + [.contentType: "application/json"]

    @Test func optionsAreStoredWithTheNotification() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let response = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.json,
                    body: APIFixture.json(
                        [
                            "richType": "text", "payload": "p", "ttl": 3600, "collapseId": "score-update", "priority": "normal",
                            "delivery": "alert",
                        ]))
                #expect(response.status == .accepted)
                let id = try #require((response.json["id"] as? String).flatMap(Int.init))
                let record = try #require(try await fixture.notifications.notification(id: id))
                #expect(
                    record.delivery == DeliveryOptions(ttl: .seconds(3600), collapseID: "score-update", priority: .normal, mode: .alert))
                // Multipart, as curl -F sends them; and none at all keeps the defaults.
                let form = try await client.execute(
                    uri: "/api/notifications", method: .post,
                    headers: APIFixture.basic("alice") + [.contentType: "multipart/form-data; boundary=XyZ"],
                    body: ByteBuffer(
                        string:
                            "--XyZ\r\nContent-Disposition: form-data; name=\"ttl\"\r\n\r\n60\r\n--XyZ\r\nContent-Disposition: form-data; name=\"priority\"\r\n\r\nhigh\r\n--XyZ\r\nContent-Disposition: form-data; name=\"delivery\"\r\n\r\nsilent\r\n--XyZ\r\nContent-Disposition: form-data; name=\"richType\"\r\n\r\ntext\r\n--XyZ\r\nContent-Disposition: form-data; name=\"payload\"\r\n\r\nhi\r\n--XyZ--\r\n"
                    ))
                #expect(form.status == .accepted, "\(String(buffer: form.body))")
                let formID = try #require((form.json["id"] as? String).flatMap(Int.init))
                #expect(
                    try await fixture.notifications.notification(id: formID)?.delivery
                        == DeliveryOptions(ttl: .seconds(60), priority: .high, mode: .silent))
            }
        }
    }

    @Test func badOptionsAreNamed() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let cases: [([String: Any], HTTPResponse.Status, String)] = [
                    (["ttl": -1], .unprocessableContent, "bad_ttl"),
                    (["ttl": 2_419_201], .unprocessableContent, "bad_ttl"),
                    (["ttl": 1.5], .badRequest, "wrong_type"),
                    (["ttl": true], .badRequest, "wrong_type"),
                    (["collapseId": String(repeating: "c", count: 65)], .unprocessableContent, "bad_collapse_id"),
                    (["collapseId": ""], .unprocessableContent, "bad_collapse_id"),
                    (["priority": "urgent"], .unprocessableContent, "bad_priority"),
                    (["priority": 10], .badRequest, "wrong_type"),
                    (["delivery": "automatic"], .unprocessableContent, "bad_delivery"),
                    (["delivery": true], .badRequest, "wrong_type"),
                ]
                for (options, status, code) in cases {
                    let body = APIFixture.json(options.merging(["richType": "text", "payload": "p"]) { first, _ in first })
                    let response = try await client.execute(uri: "/api/notifications", method: .post, headers: Self.json, body: body)
                    #expect(
                        response.status == status && response.errorCode == code,
                        "\(options): \(response.status) \(String(buffer: response.body))")
                }
            }
        }
    }
}

extension DeliveryOptionsTests {
    @Test func sendAtIsBounded() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let eightDays = Int64(Date().timeIntervalSince1970 * 1000) + 8 * 86_400_000
                for value in ["tomorrow", "2026-13-01T00:00:00Z", String(eightDays)] as [Any] + [eightDays] {
                    let response = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: Self.json,
                        body: APIFixture.json(["richType": "text", "payload": "p", "sendAt": value]))
                    #expect(
                        response.status == .unprocessableContent && response.errorCode == "bad_send_at",
                        "\(value): \(String(buffer: response.body))")
                }
                // In the past: sent now (queued, not scheduled).
                let past = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.json,
                    body: APIFixture.json(["richType": "text", "payload": "p", "sendAt": "2020-01-01T00:00:00Z"]))
                #expect(past.status == .accepted)
                let id = try #require((past.json["id"] as? String).flatMap(Int.init))
                #expect(try await fixture.notifications.status(id: id)?.state == .queued)
                // Epoch milliseconds in exponent notation are the same number (here in 2023: now).
                let exponent = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.json,
                    body: ByteBuffer(string: #"{"richType":"text","payload":"p","sendAt":1.7e12}"#))
                #expect(exponent.status == .accepted, "\(String(buffer: exponent.body))")
            }
        }
    }
}
