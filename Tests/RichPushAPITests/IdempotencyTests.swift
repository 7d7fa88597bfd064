import APITestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import Testing

/// `Idempotency-Key` on `POST /api/notifications`, across two API replicas on one Redis: a
/// retried request can never create a notification twice.
@Suite("Idempotency keys")
struct IdempotencyTests {
    static let key = HTTPField.Name("Idempotency-Key")!
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    static func headers(_ user: String, key: String) -> HTTPFields {
        APIFixture.basic(user) + [.contentType: "application/json", Self.key: key]
    }

    static let body = APIFixture.json(["message": "once", "richType": "text", "payload": "hello"])

    /// How many notifications `user` has.
    static func count(_ user: String, _ client: any TestClientProtocol) async throws -> Int {
        try await client.execute(uri: "/api/notifications?limit=100", method: .get, headers: APIFixture.basic(user)) { response in
            (response.json["notifications"] as? [Any])?.count ?? -1
        }
    }

    @Test func aRepeatOnAnotherReplicaReplaysTheFirstAnswerAndCreatesNothing() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { first in
                try await fixture.test { second in
                    let original = try await first.execute(
                        uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "order-42"), body: Self.body)
                    #expect(original.status == .accepted && original.headers[Self.replayed] == nil)
                    let again = try await second.execute(
                        uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "order-42"), body: Self.body)
                    #expect(again.status == .accepted && again.headers[Self.replayed] == "true")
                    #expect(again.bytes == original.bytes && again.headers[.location] == original.headers[.location])
                    #expect(try await Self.count("alice", first) == 1)
                    // The same key with another body: refused, nothing created.
                    let other = try await second.execute(
                        uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "order-42"),
                        body: APIFixture.json(["message": "twice", "richType": "text", "payload": "hello"]))
                    #expect(other.status == .unprocessableContent && other.errorCode == "idempotency_key_reused")
                    // Keys are per user: bob's order-42 is his own.
                    let bobs = try await first.execute(
                        uri: "/api/notifications", method: .post, headers: Self.headers("bob", key: "order-42"), body: Self.body)
                    #expect(
                        bobs.status == .accepted && bobs.headers[Self.replayed] == nil
                            && bobs.json["id"] as? String != original.json["id"] as? String)
                    let (alices, bobsCount) = (try await Self.count("alice", first), try await Self.count("bob", first))
                    #expect(alices == 1 && bobsCount == 1)
                    // Bounded: 256 characters, or a control character, is a 400.
                    for bad in [String(repeating: "k", count: 256), "tab\there"] {
                        let response = try await first.execute(
                            uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: bad), body: Self.body)
                        #expect(response.status == .badRequest && response.errorCode == "bad_idempotency_key")
                    }
                }
            }
        }
    }

    @Test func whileTheFirstIsInFlightARepeatIs409WithRetryAfter() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                // The first request's claim, as a replica holds it mid-request: same user, key and fingerprint.
                var hasher = SHA256()
                hasher.update(data: Array("application/json".utf8) + [0])
                hasher.update(data: Array(buffer: Self.body))
                let claim = try await fixture.notifications.claim(
                    IdempotencyKey(user: "alice", key: "slow", fingerprint: Hex.encode(hasher.finalize())))
                #expect(claim == .claimed)
                let response = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "slow"), body: Self.body)
                #expect(response.status == .conflict && response.errorCode == "idempotency_key_in_use")
                // The first request finishes within milliseconds: a second, not the claim's minute.
                #expect(response.headers[.retryAfter] == "1")
                #expect(try await Self.count("alice", client) == 0)
            }
        }
    }

    @Test func aRefusedRequestFreesItsKey() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.quotas.notificationsPerMinute = 1 }
            try await fixture.test { client in
                let first = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "a"), body: Self.body)
                #expect(first.status == .accepted)
                let refused = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: Self.headers("alice", key: "b"), body: Self.body)
                #expect(refused.status == .tooManyRequests)
                // Key b is free again: claiming it succeeds (a pending claim would say in flight).
                var hasher = SHA256()
                hasher.update(data: Array("application/json".utf8) + [0])
                hasher.update(data: Array(buffer: Self.body))
                #expect(
                    try await fixture.notifications.claim(
                        IdempotencyKey(user: "alice", key: "b", fingerprint: Hex.encode(hasher.finalize()))) == .claimed)
            }
        }
    }
}
