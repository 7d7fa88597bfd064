import NIOCore
import RichPushCore
import Testing

@testable import RichPushAPI

/// Reading a batch's body, without a server: its shape measured before it is parsed, and an
/// item's fingerprint independent of how its JSON was written.
@Suite("Batch input")
struct BatchInputTests {
    @Test func theShapeCountsEachLevelsValuesAndStopsAtTheDepthBound() {
        let shape = JSONShape(Array(#"{"notifications": [{"a": "x,[{", "b": [1, 2]}, {}, 3], "c": null}"#.utf8), maxDepth: 4)
        #expect(!shape.isTooDeep)
        // Depth 1: 2 members; depth 2: 3 items; depth 3: the first item's 2 members; depth 4: 2 elements.
        #expect(shape.values == [2, 3, 2, 2])
        #expect(shape.totalValues == 9)
        #expect(JSONShape(Array(String(repeating: "[", count: 1_000_000).utf8), maxDepth: 4).isTooDeep)
        #expect(JSONShape(Array(#"[["\"[[[[["]]"#.utf8), maxDepth: 2).isTooDeep == false)
    }

    @Test func anItemsFingerprintIgnoresSpacingOrderAndItsKey() throws {
        let items = try NotificationBatchInput.items(
            ByteBuffer(
                string: """
                    {"notifications": [
                      {"message": "m", "richType": "text", "payload": "p\\u0041", "ttl": 60, "idempotencyKey": "k"},
                      { "idempotencyKey" : "k2", "ttl":60, "payload":"pA", "richType":"text", "message":"m" },
                      {"message": "m", "richType": "text", "payload": "pA", "ttl": 61, "idempotencyKey": "k"},
                      {"message": "m", "richType": "text", "payload": "pA"}
                    ]}
                    """), maxItems: 1000, user: "alice")
        let keys = try items.map { try $0.get().idempotencyKey }
        #expect(keys[0]?.key == "k" && keys[1]?.key == "k2" && keys[0]?.user == "alice" && keys[3] == nil)
        #expect(keys[0]?.fingerprint == keys[1]?.fingerprint)
        #expect(keys[0]?.fingerprint != keys[2]?.fingerprint)
        #expect(
            String(
                decoding: NotificationBatchInput.canonical(
                    .object(["b": .string("\"q\""), "a": .array([.number("1e3"), .null, .bool(true)])])), as: UTF8.self)
                == #"{"a":[1e3,null,true],"b":"\"q\""}"#)
    }

    @Test func aBadItemIsThatItemsErrorAndABadBodyIsTheBatchs() throws {
        let items = try NotificationBatchInput.items(
            ByteBuffer(string: #"{"notifications": [{"idempotencyKey": 7}, {"colour": "red"}, {"idempotencyKey": ""}]}"#),
            maxItems: 10, user: "alice")
        let codes = items.map { result -> String? in if case .failure(let error) = result { error.code } else { nil } }
        #expect(codes == ["wrong_type", "unknown_field", "bad_idempotency_key"])
        if case .failure(let error) = items[1] { #expect(error.message.contains("idempotencyKey")) }
        for (body, code) in [
            (#"{"notifications": [1, 2, 3]}"#, "too_many_items"), ("{}", "missing_field"), (#"{"notifications": {}}"#, "wrong_type"),
        ] {
            #expect(throws: APIError.self, "\(body)") {
                try NotificationBatchInput.items(ByteBuffer(string: body), maxItems: 2, user: "alice")
            }
            do {
                _ = try NotificationBatchInput.items(ByteBuffer(string: body), maxItems: 2, user: "alice")
            } catch let error as APIError {
                #expect(error.code == code)
            }
        }
    }

    @Test func theAnswerHasOneResultPerItemWithRetryAfterForNotNow() {
        let json = NotificationRoutes.batchJSON(
            [
                .accepted(id: 7, target: "username:alice", replayed: true),
                .rejected(APIError.unavailable("the store is unavailable; retry shortly", retryAfter: 1)),
                .rejected(APIError.unprocessable("say \"why\"", code: "bad_message")),
            ], dryRun: false)
        #expect(
            String(decoding: json, as: UTF8.self) == #"{"accepted":1,"rejected":2,"results":["#
                + #"{"httpStatus":202,"id":"7","index":0,"payload":"/api/notifications/7","replayed":true,"status":"/api/notifications/7/status","target":"username:alice"},"#
                + #"{"error":{"code":"unavailable","message":"the store is unavailable; retry shortly"},"httpStatus":503,"index":1,"retryAfter":1},"#
                + #"{"error":{"code":"bad_message","message":"say \"why\""},"httpStatus":422,"index":2}]}"#)
    }
}
