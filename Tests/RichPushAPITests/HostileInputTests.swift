import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// What once crashed or misled the API, each answered with a 4xx and the API still serving.
@Suite("Hostile input")
struct HostileInputTests {
    @Test func deepTargetsAndBadBoundariesAre4xx() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json: HTTPFields = [.contentType: "application/json"]
                for target in [String(repeating: "!", count: 100_000) + "x", String(repeating: "a||", count: 30_000) + "a"] {
                    let body = APIFixture.json(["message": "m", "richType": "text", "payload": "p", "target": target])
                    // A plain user's target other than their own is refused before it is parsed.
                    try await client.execute(
                        uri: "/api/notifications", method: .post, headers: APIFixture.basic("alice") + json, body: body
                    ) {
                        #expect($0.status == .forbidden)
                    }
                    try await client.execute(uri: "/api/notifications", method: .post, headers: APIFixture.basic("root") + json, body: body)
                    {
                        #expect($0.status == .unprocessableContent && $0.errorCode == "bad_target", "\($0.errorMessage)")
                    }
                }
                for contentType in [
                    "multipart/form-data; boundary=", "multipart/form-data; boundary=\"\"",
                    "multipart/form-data; boundary=\(String(repeating: "b", count: 71))", "multipart/form-data",
                ] {
                    try await client.execute(
                        uri: "/api/notifications", method: .post, headers: APIFixture.basic("alice") + [.contentType: contentType],
                        body: ByteBuffer(string: "--x\r\n")
                    ) {
                        #expect($0.status == .badRequest && $0.errorCode == "malformed_multipart", "\(contentType): \($0.status)")
                    }
                }
                // One grapheme of 600 KB: limits count bytes.
                let heavy = "e" + String(repeating: "\u{301}", count: 300_000)
                #expect(heavy.count == 1)
                try await client.execute(
                    uri: "/api/notifications", method: .post, headers: APIFixture.basic("alice") + json,
                    body: APIFixture.json(["message": heavy, "richType": "text", "payload": "p"])
                ) {
                    #expect($0.status == .unprocessableContent && $0.errorCode == "bad_message")
                }
                try await client.execute(uri: "/health/live", method: .get) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func wrongMethodsAndOverlongPasswords() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                try await client.execute(uri: "/api/notifications", method: .delete, headers: APIFixture.basic("alice")) { response in
                    #expect(response.status == .methodNotAllowed)
                    #expect(response.headers[.allow] == "GET, POST")
                }
                // (A declared Content-Length over the limit is answered 413 at once: scripts/security.sh
                // sends it over a raw socket, which HummingbirdTesting's client cannot.)
                // 73 bytes whose first 72 are the password: bcrypt would accept them, the API does not.
                let long = "alice-pw" + String(repeating: "x", count: 65)
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice", long)) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }

    @Test func handlesQuotasReceiptsAndStatusAreTheOwnersBusiness() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) {
                $0.quotas = .init(notificationsPerMinute: 3, payloadBytes: 0, registrations: 2, tags: 3)
            }
            try await fixture.test { client in
                let aliceDevice = try await client.register("alice", handle: "shared-token", tags: ["sports"])
                // Bob may not take over a handle Alice registered.
                let bobID = try await client.execute(uri: "/api/register", method: .post, headers: APIFixture.basic("bob")) {
                    try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                }
                try await client.execute(
                    uri: "/api/register/\(bobID)", method: .put, headers: APIFixture.basic("bob"),
                    body: APIFixture.json(["Platform": "apns", "Handle": "shared-token"])
                ) {
                    #expect($0.status == .conflict && $0.errorCode == "handle_taken")
                }
                // Registrations and distinct tags are bounded per user.
                try await client.execute(
                    uri: "/api/register/\(aliceDevice)", method: .put, headers: APIFixture.basic("alice"),
                    body: APIFixture.json(["Platform": "apns", "Handle": "shared-token", "Tags": ["a", "b", "c"]])
                ) {
                    #expect($0.status == .tooManyRequests && $0.errorCode == "quota_exceeded")
                }
                _ = try await client.register("alice", handle: "second", tags: ["news"])
                let third = try await client.execute(uri: "/api/register", method: .post, headers: APIFixture.basic("alice")) {
                    try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                }
                try await client.execute(
                    uri: "/api/register/\(third)", method: .put, headers: APIFixture.basic("alice"),
                    body: APIFixture.json(["Platform": "apns", "Handle": "third"])
                ) {
                    #expect($0.status == .tooManyRequests && $0.errorCode == "quota_exceeded")
                    #expect($0.headers[.retryAfter] != nil)
                }
                // Root sends to sports: Alice's device is addressed, Bob's (tagged later) is not.
                let bobDevice = try await client.register("bob", handle: "bob-token", tags: [])
                let sent = try await client.sendImage("root", target: "sports")
                let id = try #require(Int(sent.json["id"] as? String ?? ""))
                _ = try await fixture.ledger.leaseDeliveries(id: id, installations: [aliceDevice], owner: "test", duration: .seconds(30))
                try await fixture.ledger.recordDeliveries(id: id, results: [DeliveryResult(installation: aliceDevice, counter: .sent)])
                _ = try await client.register("bob", handle: "bob-token", tags: ["sports"])
                #expect(bobDevice.isEmpty == false)
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
                    #expect(response.headers[.contentDisposition]?.hasPrefix("inline") == true)
                }
                // Receipts count once per reader and kind.
                for _ in 0..<5 {
                    try await client.execute(
                        uri: "/api/notifications/\(id)/receipts", method: .post, headers: APIFixture.basic("alice"),
                        body: APIFixture.json(["kind": "opened"])
                    ) { #expect($0.status == .ok) }
                }
                try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("alice")) {
                    response in
                    #expect((response.json["counts"] as? [String: Int])?["opened"] == 1)
                    #expect((response.json["devices"] as? [[String: Any]])?.count == 1)
                }
                // Three notifications a minute for Alice; the fourth waits.
                for expected in [HTTPResponse.Status.accepted, .accepted, .accepted, .tooManyRequests] {
                    let response = try await client.sendImage("alice")
                    #expect(response.status == expected)
                    if expected == .tooManyRequests {
                        #expect(response.errorCode == "quota_exceeded" && response.headers[.retryAfter] != nil)
                    }
                }
            }
        }
    }

    @Test func apiKeysActAsTheirUserWithinTheirScopes() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let keys = RedisAPIKeyStore(redis: fixture.redis, keys: fixture.keys)
            let (key, token) = try #require(try await keys.create(user: "alice", scopes: [.send], label: "backend"))
            #expect(try await keys.create(user: "nobody", scopes: [.send], label: "") == nil)
            try await fixture.test { client in
                let bearer: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
                try await client.execute(
                    uri: "/api/notifications", method: .post, headers: bearer,
                    body: APIFixture.json(["message": "m", "richType": "text", "payload": "p"])
                ) { #expect($0.status == .accepted) }
                try await client.execute(uri: "/api/notifications", method: .get, headers: bearer) {
                    #expect($0.status == .forbidden && $0.errorCode == "insufficient_scope")
                }
                try await client.execute(
                    uri: "/api/notifications", method: .get,
                    headers: [.authorization: "Bearer rpk_0000000000000000_\(String(repeating: "A", count: 43))"]
                ) {
                    #expect($0.status == .unauthorized)
                }
                #expect(try await keys.revoke(id: key.id))
                #expect(try await keys.verify(token: token) == nil)
                // Removing a user revokes all their keys at once.
                let bobKeys = [
                    try await keys.create(user: "bob", scopes: [.read], label: "a"),
                    try await keys.create(user: "bob", scopes: [.send], label: "b"),
                ]
                #expect(try await keys.revokeAll(user: "bob") == 2)
                for created in bobKeys { #expect(try await keys.verify(token: try #require(created).token) == nil) }
                #expect(try await keys.list(user: "bob").isEmpty)
            }
        }
    }
}
