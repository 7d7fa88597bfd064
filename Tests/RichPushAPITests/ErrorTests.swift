import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import Testing

/// Bad input gets a clear 4xx with a JSON body naming the problem, and writes nothing.
@Suite("Errors and limits")
struct ErrorTests {
    @Test func badNotificationRequests() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.maxPayloadBytes = 1024 }
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let cases: [(HTTPFields, ByteBuffer, HTTPResponse.Status, String, String)] = [
                    (json, ByteBuffer(string: "{not json"), .badRequest, "malformed_json", "not valid JSON"),
                    (json, APIFixture.json(["message": "x", "colour": "red"]), .badRequest, "unknown_field", "colour"),
                    (json, APIFixture.json(["richType": "img", "payload": "%%%not base64%%%"]), .badRequest, "bad_base64", "base64"),
                    (
                        json, APIFixture.json(["richType": "video", "payload": "AAAA"]), .unprocessableContent, "unknown_rich_type",
                        "img, url, sound, text"
                    ),
                    (json, APIFixture.json(["richType": "url", "payload": "not a url"]), .unprocessableContent, "bad_url", "http(s)"),
                    (json, APIFixture.json(["message": 42]), .badRequest, "wrong_type", "message"),
                    (
                        json, APIFixture.json(["richType": "img", "payload": Data(repeating: 1, count: 2000).base64EncodedString()]),
                        .contentTooLarge, "too_large", "1024"
                    ),
                    (
                        APIFixture.basic("alice") + [.contentType: "text/plain"], ByteBuffer(string: "hello"), .unsupportedMediaType,
                        "unsupported_media_type", "text/plain"
                    ),
                    (json, APIFixture.json(["richType": "text"]), .unprocessableContent, "missing_payload", "payload"),
                ]
                for (headers, body, status, code, words) in cases {
                    try await client.execute(uri: "/api/notifications", method: .post, headers: headers, body: body) { response in
                        #expect(response.status == status, "\(String(buffer: body)) → \(String(buffer: response.body))")
                        #expect(response.errorCode == code)
                        #expect(response.errorMessage.contains(words), "\(response.errorMessage)")
                    }
                }
                // A body far over the limit is cut off by the server before it is read whole.
                try await client.execute(
                    uri: "/api/notifications", method: .post, headers: json,
                    body: ByteBuffer(bytes: [UInt8](repeating: 32, count: 200_000))
                ) { response in
                    #expect(
                        response.status == .contentTooLarge && response.errorCode == "too_large",
                        "\(response.status) \(String(buffer: response.body))")
                }
                // Nothing was written.
                #expect(try await fixture.jobQueue.jobCount() == 0)
            }
        }
    }

    @Test func badIdsRoutesAndRegistrations() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let alice = APIFixture.basic("alice")
                for path in ["/api/notifications/abc", "/api/notifications/-1", "/api/notifications/007", "/api/notifications/1.5/status"] {
                    try await client.execute(uri: path, method: .get, headers: alice) { response in
                        #expect(response.status == .badRequest && response.errorCode == "bad_id", "\(path)")
                    }
                }
                try await client.execute(uri: "/nowhere", method: .get) { response in
                    #expect(response.status == .notFound && response.errorCode == "not_found")
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "blackberry", "Handle": "h"])
                ) { response in
                    #expect(response.status == .badRequest && response.errorCode == "unknown_platform")
                    #expect(response.errorMessage.contains("apns"))
                }
                // An FCM registration token has FCM's alphabet; the same handle is fine for APNs.
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "fcm", "Handle": "abc/def+="])
                ) { response in
                    #expect(response.status == .badRequest && response.errorCode == "bad_handle")
                    #expect(response.errorMessage.contains("FCM registration token"), "\(response.errorMessage)")
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "fcm", "Handle": "cX1:APA91b-x_y.z"])
                ) { response in
                    #expect(response.status == .ok)
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "apns", "Handle": String(repeating: "a", count: 513)])
                ) { response in
                    #expect(response.status == .badRequest && response.errorCode == "bad_handle")
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "apns", "Handle": "h", "Extra": 1])
                ) { response in
                    #expect(response.status == .badRequest && response.errorCode == "unknown_field")
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "apns", "Handle": "h", "Tags": ["bad tag!"]])
                ) { response in
                    #expect(response.status == .unprocessableContent && response.errorCode == "invalid_tag")
                }
                for (body, code) in [
                    (["Platform": "apns", "Handle": "h", "Tags": ["news", 3]], "wrong_type"),
                    (["Platform": "apns", "Handle": "h", "Tags": "news"], "wrong_type"),
                    (["Platform": 1, "Handle": "h"], "missing_field"),
                    (["Platform": "apns", "Handle": NSNull()], "missing_field"),
                ] as [([String: Any], String)] {
                    try await client.execute(uri: "/api/register/abc", method: .put, headers: alice, body: APIFixture.json(body)) {
                        response in
                        #expect(response.status == .badRequest && response.errorCode == code, "\(body): \(response.status)")
                    }
                }
                try await client.execute(
                    uri: "/api/register/abc", method: .put, headers: alice,
                    body: APIFixture.json(["Platform": "apns", "Handle": "h", "Tags": NSNull()])
                ) { response in
                    #expect(response.status == .ok && response.json["Tags"] as? [String] == ["username:alice"])
                }
                try await client.execute(uri: "/api/notifications?limit=1000", method: .get, headers: alice) { response in
                    #expect(response.status == .badRequest && response.errorCode == "bad_limit")
                }
                try await client.execute(
                    uri: "/api/notifications/1/receipts", method: .post, headers: alice, body: APIFixture.json(["kind": "opened"])
                ) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }

    @Test func redisDownIs503AndTheAPIRecovers() async throws {
        try await withRedisServer(appendOnly: true) { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                #expect(try await client.sendImage("alice").status == .accepted)
                server.stop()
                let refused = try await client.sendImage("alice")
                #expect(refused.status == .serviceUnavailable)
                #expect(refused.headers[.retryAfter] != nil)
                #expect(refused.errorCode == "unavailable")
                try await client.execute(uri: "/health/ready", method: .get) { #expect($0.status == .serviceUnavailable) }
                try await client.execute(uri: "/health/live", method: .get) { #expect($0.status == .ok) }
                try await server.start()
                try await waitUntil(timeout: .seconds(60), "the API to accept again") {
                    try await client.sendImage("alice").status == .accepted
                }
                try await client.execute(uri: "/health/ready", method: .get) { #expect($0.status == .ok) }
                // Nothing half-written: every record has its job.
                let jobs = try await fixture.jobQueue.jobCount()
                let created = try await fixture.redis.send("GET", "\(fixture.keys.prefix):seq:notification").int ?? 0
                #expect(jobs >= 2 && jobs <= created)
            }
        }
    }

    @Test func redisOutOfMemoryOrReadOnlyIs503() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                #expect(try await client.sendImage("alice").status == .accepted)
                // Every "not now" answer, even inside MULTI or a script, is 503 + Retry-After.
                for (setup, undo) in [
                    (["CONFIG", "SET", "maxmemory", "1"], ["CONFIG", "SET", "maxmemory", "0"]),
                    (["REPLICAOF", "127.0.0.1", "1"], ["REPLICAOF", "NO", "ONE"]),
                ] {
                    _ = try await fixture.redis.send(RedisCommand(setup[0], arguments: Array(setup.dropFirst())))
                    let refused = try await client.sendImage("alice", payload: APIFixture.png + [UInt8(setup.count)])
                    #expect(refused.status == .serviceUnavailable, "\(setup): \(refused.status) \(refused.errorMessage)")
                    #expect(refused.headers[.retryAfter] != nil && refused.errorCode == "unavailable")
                    _ = try await fixture.redis.send(RedisCommand(undo[0], arguments: Array(undo.dropFirst())))
                }
                #expect(try await client.sendImage("alice").status == .accepted)
            }
        }
    }

    @Test func idsNeverRepeatWhenTheCounterGoesBack() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let draft = { (message: String) in
                NotificationDraft(
                    message: message, richType: .text, contentType: "text/plain", payload: Array(message.utf8), creator: "alice",
                    target: "username:alice")
            }
            let first = try await fixture.notifications.create(draft("first")) { _ in "h1" }
            let second = try await fixture.notifications.create(draft("second")) { _ in "h2" }
            // Redis lost the last INCRBYs (AOF everysec, a failover): the counter goes back.
            _ = try await fixture.redis.send("SET", "\(fixture.keys.prefix):seq:notification", 0)
            // A fresh process (no ids reserved in memory) meets the taken ids and skips them.
            let later = try await fixture.notifications.create(draft("later")) { _ in "h3" }
            #expect(![first.id, second.id].contains(later.id))
            let records = try await fixture.notifications.notifications(ids: [first.id, second.id, later.id])
            #expect(records.map(\.message) == ["first", "second", "later"])
            #expect(try await fixture.jobQueue.jobCount() == 3)
        }
    }

    @Test func backlogOverItsBoundIs503() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.maxBacklog = 2 }
            try await fixture.test { client in
                #expect(try await client.sendImage("alice").status == .accepted)
                #expect(try await client.sendImage("alice").status == .accepted)
                // The guard re-reads the backlog at most every 250 ms.
                try await waitUntil(timeout: .seconds(60), "the bound to bite") {
                    let response = try await client.sendImage("alice")
                    return response.status == .serviceUnavailable && response.headers[.retryAfter] == "5"
                }
            }
        }
    }
}
