import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

@testable import RichPushAPI

/// `POST /api/notifications/batch`: each item checked, keyed and created as a single create
/// would, one result per item in order, and a body that is not a batch refused whole.
@Suite("Batch create", .serialized)
struct BatchTests {
    static let json = APIFixture.basic("alice") + [.contentType: "application/json"]

    static func text(_ payload: String, key: String? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        var item: [String: Any] = ["message": "m \(payload)", "richType": "text", "payload": payload]
        if let key { item["idempotencyKey"] = key }
        return item.merging(extra) { $1 }
    }

    static func body(_ items: [Any]) -> ByteBuffer { APIFixture.json(["notifications": items]) }

    /// The results of a batch's answer, in order.
    static func results(_ response: TestResponse) -> [[String: Any]] { response.json["results"] as? [[String: Any]] ?? [] }

    static func code(_ result: [String: Any]) -> String? { (result["error"] as? [String: Any])?["code"] as? String }

    static func jobs(_ fixture: APIFixture) async throws -> Int {
        try await fixture.jobQueue.jobCount()
    }

    @Test func aMixedBatchCreatesItsValidItemsOnlyEachWithItsOwnAnswer() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.maxPayloadBytes = 1024 }
            try await fixture.test { client in
                let items: [Any] = [
                    Self.text("first"),
                    ["richType": "video", "payload": "AAAA"],
                    ["message": "image", "richType": "img", "payload": Data(APIFixture.png).base64EncodedString(), "ttl": 60],
                    ["richType": "url", "payload": "not a url"],
                    ["message": "x", "colour": "red"],
                    "not an object",
                    ["richType": "img", "payload": Data(repeating: 1, count: 2000).base64EncodedString()],
                    ["message": 42, "richType": "text", "payload": "p"],
                    Self.text("last", ["priority": "normal"]),
                ]
                let response = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body(items))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                #expect(response.json["accepted"] as? Int == 3 && response.json["rejected"] as? Int == 6)
                let results = Self.results(response)
                // Indexed below: a failed answer (no results) fails here rather than crashing the suite.
                try #require(results.count == 9, "\(String(buffer: response.body))")
                #expect(results.compactMap { $0["index"] as? Int } == Array(0..<9))
                #expect(results.compactMap { $0["httpStatus"] as? Int } == [202, 422, 202, 422, 400, 400, 413, 400, 202])
                #expect(
                    results.map(Self.code) == [
                        nil, "unknown_rich_type", nil, "bad_url", "unknown_field", "malformed_json", "too_large", "wrong_type", nil,
                    ])
                // The same messages a single create gives.
                #expect(((results[1]["error"] as? [String: Any])?["message"] as? String)?.contains("img, url, sound, text") == true)
                #expect(((results[4]["error"] as? [String: Any])?["message"] as? String)?.contains("colour") == true)
                let ids = [0, 2, 8].compactMap { (results[$0]["id"] as? String).flatMap(Int.init) }
                #expect(Set(ids).count == 3)
                for index in [0, 2, 8] {
                    let id = results[index]["id"] as? String ?? ""
                    #expect(results[index]["payload"] as? String == "/api/notifications/\(id)")
                    #expect(results[index]["status"] as? String == "/api/notifications/\(id)/status")
                    #expect(results[index]["target"] as? String == "username:alice" && results[index]["replayed"] == nil)
                }
                // The valid items are stored and queued, each with its own payload; nothing else.
                #expect(try await Self.jobs(fixture) == 3)
                for id in ids {
                    try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("alice")) {
                        response in
                        #expect(response.json["state"] as? String == "queued", "\(String(buffer: response.body))")
                    }
                }
                try await client.execute(uri: "/api/notifications/\(ids[1])", method: .get, headers: APIFixture.basic("alice")) {
                    response in
                    #expect(response.status == .ok && response.bytes == APIFixture.png && response.headers[.contentType] == "image/png")
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(
                        (response.json["notifications"] as? [[String: Any]])?.compactMap { $0["message"] as? String }.sorted() == [
                            "image", "m first", "m last",
                        ])
                }
            }
        }
    }

    @Test func eachItemsIdempotencyKeyReplaysItsNotificationOrRefusesAnotherItem() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let items = [Self.text("a", key: "order-1"), Self.text("b", key: "order-2"), Self.text("c", key: "order-3")]
                let first = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body(items))
                let ids = Self.results(first).compactMap { $0["id"] as? String }
                #expect(ids.count == 3 && Self.results(first).allSatisfy { $0["replayed"] == nil })
                // The same batch again, its JSON written otherwise (spacing, order): replayed, same ids, nothing new.
                let respaced =
                    #"{ "notifications" : [ {"payload":"a", "idempotencyKey":"order-1", "richType":"text", "message":"m a"},"#
                    + #" {"message":"m b","richType":"text","payload":"b","idempotencyKey":"order-2"}, "#
                    + #"{"idempotencyKey":"order-3","message":"m c","payload":"c","richType":"text"} ] }"#
                let again = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: ByteBuffer(string: respaced))
                #expect(Self.results(again).compactMap { $0["id"] as? String } == ids)
                #expect(Self.results(again).allSatisfy { $0["replayed"] as? Bool == true && $0["httpStatus"] as? Int == 202 })
                #expect(try await Self.jobs(fixture) == 3)
                // A key used with another item: that item only is refused.
                let mixed = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json,
                    body: Self.body([
                        Self.text("other", key: "order-1"), Self.text("d", key: "order-4"),
                        Self.text("e", key: String(repeating: "k", count: 256)),
                    ]))
                let results = Self.results(mixed)
                try #require(results.count == 3, "\(String(buffer: mixed.body))")
                #expect(results.compactMap { $0["httpStatus"] as? Int } == [422, 202, 400])
                #expect(Self.code(results[0]) == "idempotency_key_reused" && Self.code(results[2]) == "bad_idempotency_key")
                #expect(((results[2]["error"] as? [String: Any])?["message"] as? String)?.contains("idempotencyKey") == true)
                #expect(try await Self.jobs(fixture) == 4)
                // One key twice in a batch: the same item shares the first's notification, another is refused.
                let twice = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json,
                    body: Self.body([Self.text("f", key: "order-5"), Self.text("f", key: "order-5"), Self.text("g", key: "order-5")]))
                let repeated = Self.results(twice)
                #expect(repeated.compactMap { $0["httpStatus"] as? Int } == [202, 202, 422])
                #expect(repeated[1]["id"] as? String == repeated[0]["id"] as? String && repeated[1]["replayed"] as? Bool == true)
                #expect(try await Self.jobs(fixture) == 5)
                // Another request holds a key (claimed, not completed): 409 with retryAfter for that item.
                let held = Self.text("h", key: "slow")
                var fields: [String: JSONValue] = [:]
                for (name, value) in held where name != "idempotencyKey" { fields[name] = .string(value as? String ?? "") }
                let fingerprint = NotificationBatchInput.fingerprint(of: fields)
                #expect(
                    try await fixture.notifications.claim(IdempotencyKey(user: "alice", key: "slow", fingerprint: fingerprint)) == .claimed)
                let busy = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body([held]))
                #expect(
                    Self.results(busy).first?["httpStatus"] as? Int == 409 && Self.code(Self.results(busy)[0]) == "idempotency_key_in_use")
                #expect(Self.results(busy).first?["retryAfter"] as? Int == 1)
                // Keys are shared with the header, but a batch item is never the same request as a single create.
                let single = try await client.execute(
                    uri: "/api/notifications", method: .post,
                    headers: Self.json + [HTTPField.Name("Idempotency-Key")!: "order-6"], body: APIFixture.json(Self.text("i")))
                #expect(single.status == .accepted)
                let crossed = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body([Self.text("i", key: "order-6")]))
                #expect(Self.code(Self.results(crossed).first ?? [:]) == "idempotency_key_reused")
            }
        }
    }

    @Test func aSpentQuotaRefusesTheRestOfTheBatchWithRetryAfterAndFreesTheirKeys() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.quotas.notificationsPerMinute = 3 }
            try await fixture.test { client in
                // Keyed and unkeyed items mixed: the quota is spent in the items' order all the same.
                let items = (0..<5).map { Self.text("q\($0)", key: $0 % 2 == 0 ? "quota-\($0)" : nil) }
                let response = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body(items))
                let results = Self.results(response)
                try #require(results.count == 5, "\(String(buffer: response.body))")
                #expect(results.compactMap { $0["httpStatus"] as? Int } == [202, 202, 202, 429, 429], "\(String(buffer: response.body))")
                #expect(response.json["accepted"] as? Int == 3 && response.json["rejected"] as? Int == 2)
                for refused in results[3...] {
                    #expect(Self.code(refused) == "quota_exceeded" && (refused["retryAfter"] as? Int ?? 0) >= 1)
                }
                #expect(try await Self.jobs(fixture) == 3)
                // The refused items' keys were released: claiming one now succeeds.
                var fields: [String: JSONValue] = [:]
                for (name, value) in items[4] where name != "idempotencyKey" { fields[name] = .string(value as? String ?? "") }
                let key = IdempotencyKey(user: "alice", key: "quota-4", fingerprint: NotificationBatchInput.fingerprint(of: fields))
                #expect(try await fixture.notifications.claim(key) == .claimed)
            }
        }
    }

    @Test func aBodyThatIsNotABatchIsRefusedWholeAndTheAPIStillAnswers() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.maxBatchBodyBytes = 256 * 1024 }
            try await fixture.test { client in
                let tooMany = Self.body((0...NotificationRoutes.maxBatchItems).map { Self.text("\($0)") })
                let deep = ByteBuffer(string: #"{"notifications":[{"message":[[["deep"]]]}]}"#)
                let deeper = ByteBuffer(
                    string: #"{"notifications":["# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "]}")
                // Over the 16,002 values of 1,000 plain items and the 8,192 of the items' properties.
                let wide = ByteBuffer(
                    string: #"{"notifications":[{"message":["# + Array(repeating: "1", count: 25_000).joined(separator: ",") + "]}]}")
                let cases: [(HTTPFields, ByteBuffer, HTTPResponse.Status, String, String)] = [
                    (Self.json, tooMany, .unprocessableContent, "too_many_items", "1000"),
                    (Self.json, Self.body([]), .unprocessableContent, "empty_batch", "1 to 1000"),
                    (Self.json, ByteBuffer(bytes: [UInt8](repeating: 32, count: 300_000)), .contentTooLarge, "too_large", "262144"),
                    (Self.json, ByteBuffer(string: "{not json"), .badRequest, "malformed_json", "not valid JSON"),
                    (
                        APIFixture.basic("alice") + [.contentType: "text/plain"], Self.body([Self.text("a")]), .unsupportedMediaType,
                        "unsupported_media_type", "text/plain"
                    ),
                    (
                        APIFixture.basic("alice"), Self.body([Self.text("a")]), .unsupportedMediaType, "unsupported_media_type",
                        "no Content-Type"
                    ),
                    (Self.json, deep, .badRequest, "too_deep", "5 deep"),
                    (Self.json, deeper, .badRequest, "too_deep", "5 deep"),
                    (Self.json, wide, .contentTooLarge, "too_large", "JSON values"),
                    (
                        Self.json, APIFixture.json(["notifications": Self.text("a")]), .badRequest, "wrong_type",
                        "'notifications' must be an array"
                    ),
                    (Self.json, APIFixture.json(["items": [Self.text("a")]]), .badRequest, "unknown_field", "items"),
                    (Self.json, ByteBuffer(string: "{}"), .badRequest, "missing_field", "notifications"),
                    (Self.json, ByteBuffer(string: "[]"), .badRequest, "malformed_json", "JSON object"),
                    (
                        Self.json + [HTTPField.Name("Idempotency-Key")!: "k"], Self.body([Self.text("a")]), .badRequest,
                        "bad_idempotency_key", "idempotencyKey"
                    ),
                ]
                for (headers, body, status, code, words) in cases {
                    let response = try await client.execute(uri: "/api/notifications/batch", method: .post, headers: headers, body: body)
                    #expect(response.status == status, "\(String(buffer: body).prefix(80)) → \(String(buffer: response.body))")
                    #expect(response.errorCode == code && response.errorMessage.contains(words), "\(code): \(response.errorMessage)")
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                }
                // Items that are not notifications are refused one by one.
                let scalars = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body([1, "x", NSNull()]))
                #expect(
                    scalars.status == .ok
                        && Self.results(scalars).allSatisfy { Self.code($0) == "malformed_json" && $0["httpStatus"] as? Int == 400 })
                // Other methods: 405 naming POST; the batch path is not taken for an id.
                try await client.execute(uri: "/api/notifications/batch", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.status == .methodNotAllowed && response.headers[.allow] == "POST", "\(response.status)")
                }
                #expect(try await Self.jobs(fixture) == 0)
                // Still serving.
                let fine = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body([Self.text("ok")]))
                #expect(fine.status == .ok && fine.json["accepted"] as? Int == 1)
                try await client.execute(uri: "/health/live", method: .get) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func aDryRunChecksEveryItemAndWritesNothing() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                // Authenticated once already, so the snapshot sees only what the dry run would write.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) {
                    #expect($0.status == .ok)
                }
                let before = try await DryRunTests.snapshot(fixture.redis)
                let items = [Self.text("a", key: "dry-1"), Self.text("b", ["priority": "urgent"]), Self.text("c")]
                let response = try await client.execute(
                    uri: "/api/notifications/batch?dryRun=true", method: .post, headers: Self.json, body: Self.body(items))
                #expect(response.status == .ok && response.json["dryRun"] as? Bool == true)
                #expect(response.json["accepted"] as? Int == 2 && response.json["rejected"] as? Int == 1)
                let results = Self.results(response)
                try #require(results.count == 3, "\(String(buffer: response.body))")
                #expect(results.compactMap { $0["httpStatus"] as? Int } == [200, 422, 200] && Self.code(results[1]) == "bad_priority")
                #expect(results[0]["target"] as? String == "username:alice" && results[0]["id"] == nil)
                let after = try await DryRunTests.snapshot(fixture.redis)
                #expect(before == after, "a dry run wrote: \(Set(after.keys).symmetricDifference(before.keys))")
                let flag = try await client.execute(
                    uri: "/api/notifications/batch?dryRun=maybe", method: .post, headers: Self.json, body: Self.body(items))
                #expect(flag.status == .badRequest && flag.errorCode == "bad_dry_run")
            }
        }
    }

    @Test func aPlainUserSendsOnlyToTheirOwnTagAndAKeyNeedsTheSendScope() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let keys = RedisAPIKeyStore(redis: fixture.redis, keys: fixture.keys)
            let (_, reader) = try #require(try await keys.create(user: "alice", scopes: [.read], label: "reader"))
            let (_, sender) = try #require(try await keys.create(user: "alice", scopes: [.send], label: "sender"))
            try await fixture.test { client in
                let items = [
                    Self.text("own", ["target": "username:alice"]), Self.text("bob's", ["target": "username:bob"]),
                    Self.text("all", ["target": "sports || news"]),
                ]
                let alice = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body(items))
                #expect(Self.results(alice).compactMap { $0["httpStatus"] as? Int } == [202, 403, 403])
                #expect(Self.results(alice).dropFirst().allSatisfy { Self.code($0) == "forbidden" })
                let root = try await client.execute(
                    uri: "/api/notifications/batch", method: .post,
                    headers: APIFixture.basic("root") + [.contentType: "application/json"], body: Self.body(items))
                #expect(Self.results(root).compactMap { $0["target"] as? String } == ["username:alice", "username:bob", "sports || news"])
                let read = try await client.execute(
                    uri: "/api/notifications/batch", method: .post,
                    headers: [.authorization: "Bearer \(reader)", .contentType: "application/json"], body: Self.body(items))
                #expect(read.status == .forbidden && read.errorCode == "insufficient_scope")
                let send = try await client.execute(
                    uri: "/api/notifications/batch", method: .post,
                    headers: [.authorization: "Bearer \(sender)", .contentType: "application/json"], body: Self.body([items[0]]))
                #expect(send.status == .ok && send.json["accepted"] as? Int == 1)
            }
        }
    }

    @Test func redisAwayIs503ForTheWholeBatchAndItsKeyedItemsAreSafeToSendAgain() async throws {
        try await withRedisServer(appendOnly: true) { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let items = Self.body([Self.text("a", key: "away-1"), Self.text("b", key: "away-2")])
                server.stop()
                let refused = try await client.execute(uri: "/api/notifications/batch", method: .post, headers: Self.json, body: items)
                #expect(refused.status == .serviceUnavailable && refused.errorCode == "unavailable" && refused.headers[.retryAfter] != nil)
                try await server.start()
                var ids: [String] = []
                try await waitUntil(timeout: .seconds(60), "the batch to be accepted again") {
                    let response = try await client.execute(uri: "/api/notifications/batch", method: .post, headers: Self.json, body: items)
                    ids = Self.results(response).compactMap { $0["id"] as? String }
                    return response.status == .ok && ids.count == 2
                }
                // Sent once more: the same two notifications, replayed; nothing new.
                let again = try await client.execute(uri: "/api/notifications/batch", method: .post, headers: Self.json, body: items)
                #expect(
                    Self.results(again).compactMap { $0["id"] as? String } == ids
                        && Self.results(again).allSatisfy { $0["replayed"] as? Bool == true })
                #expect(try await Self.jobs(fixture) == 2)
            }
        }
    }

    @Test func aFullBacklogIs503ForTheWholeBatch() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.maxBacklog = 2 }
            try await fixture.test { client in
                let first = try await client.execute(
                    uri: "/api/notifications/batch", method: .post, headers: Self.json,
                    body: Self.body([Self.text("a"), Self.text("b")]))
                #expect(first.json["accepted"] as? Int == 2)
                // The guard re-reads the backlog at most every 250 ms.
                try await waitUntil(timeout: .seconds(60), "the bound to bite") {
                    let response = try await client.execute(
                        uri: "/api/notifications/batch", method: .post, headers: Self.json, body: Self.body([Self.text("c")]))
                    return response.status == .serviceUnavailable && response.headers[.retryAfter] == "5"
                        && response.errorCode == "unavailable"
                }
            }
        }
    }
}
