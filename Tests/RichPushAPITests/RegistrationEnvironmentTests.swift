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

/// `PUT /api/register/{id}` with `"Environment"`: which of Apple's services an iOS device's token
/// belongs to. Absent is production; only `apns` registrations may say it; the store keeps it in
/// the installation's hash, and a hash written before the field existed reads as production.
@Suite("Registration environment")
struct RegistrationEnvironmentTests {
    @Test func acceptedValuesAndTheDefault() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let store = RedisInstallationStore(redis: fixture.redis, keys: fixture.keys)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                func put(_ id: String, _ body: [String: Any]) async throws -> TestResponse {
                    try await client.execute(uri: "/api/register/\(id)", method: .put, headers: json, body: APIFixture.json(body))
                }
                for (id, environment, expected) in [("dev1", "sandbox", APNSEnvironment.sandbox), ("prod1", "production", .production)] {
                    let response = try await put(id, ["Platform": "apns", "Handle": "h-\(id)", "Environment": environment])
                    #expect(
                        response.status == .ok && response.json["Environment"] as? String == environment, "\(String(buffer: response.body))"
                    )
                    #expect(try await store.installation(id: id)?.apnsEnvironment == expected)
                }
                for body in [["Platform": "apns", "Handle": "h-none"], ["Platform": "apns", "Handle": "h-none", "Environment": NSNull()]]
                    as [[String: Any]]
                {
                    let response = try await put("none", body)
                    #expect(response.status == .ok && response.json["Environment"] as? String == "production")
                    #expect(try await store.installation(id: "none")?.apnsEnvironment == .production)
                }
                // Production is stored as no field at all, the shape every older registration has.
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.installation("dev1"), "environment").int == 1)
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.installation("prod1"), "environment").int == 0)
                // Moving a device between environments: the update replaces it, both ways.
                _ = try await put("dev1", ["Platform": "apns", "Handle": "h-dev1"])
                #expect(try await store.installation(id: "dev1")?.apnsEnvironment == .production)
                #expect(try await fixture.redis.send("HEXISTS", fixture.keys.installation("dev1"), "environment").int == 0)
                _ = try await put("prod1", ["Platform": "apns", "Handle": "h-prod1", "Environment": "sandbox"])
                #expect(try await store.installation(id: "prod1")?.apnsEnvironment == .sandbox)
                // Another platform says nothing of an environment.
                let android = try await put("android1", ["Platform": "fcm", "Handle": "cX1:APA91b-x"])
                #expect(android.status == .ok && android.json["Environment"] == nil, "\(String(buffer: android.body))")
            }
        }
    }

    @Test func refusedValuesNameTheField() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                let cases: [([String: Any], HTTPResponse.Status, String)] = [
                    (["Platform": "apns", "Handle": "h", "Environment": "development"], .badRequest, "unknown_environment"),
                    (["Platform": "apns", "Handle": "h", "Environment": "Sandbox"], .badRequest, "unknown_environment"),
                    (["Platform": "apns", "Handle": "h", "Environment": ""], .badRequest, "unknown_environment"),
                    (["Platform": "apns", "Handle": "h", "Environment": 1], .badRequest, "wrong_type"),
                    (["Platform": "apns", "Handle": "h", "Environment": ["sandbox"]], .badRequest, "wrong_type"),
                    (
                        ["Platform": "fcm", "Handle": "cX1:APA91b-x", "Environment": "sandbox"], .unprocessableContent,
                        "environment_not_apns"
                    ),
                    (
                        ["Platform": "fcm", "Handle": "cX1:APA91b-x", "Environment": "production"], .unprocessableContent,
                        "environment_not_apns"
                    ),
                    (["Platform": "wns", "Handle": "h", "Environment": "production"], .unprocessableContent, "environment_not_apns"),
                ]
                for (body, status, code) in cases {
                    try await client.execute(uri: "/api/register/e1", method: .put, headers: json, body: APIFixture.json(body)) {
                        response in
                        #expect(response.status == status && response.errorCode == code, "\(body): \(String(buffer: response.body))")
                        #expect(
                            response.errorMessage.contains("Environment") || response.errorMessage.contains("environment"),
                            "\(response.errorMessage)")
                    }
                }
                // Nothing was written.
                #expect(try await fixture.redis.send("EXISTS", fixture.keys.installation("e1")).int == 0)
            }
        }
    }

    /// A hash as the store wrote it before environments existed (no `environment` field) is a
    /// production installation: no migration.
    @Test func aRegistrationStoredBeforeEnvironmentsReadsAsProduction() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("env-old").dropLast()))
            try await redis.send(
                "HSET", keys.installation("old1"), "platform", "apns", "handle", "h-old", "tags", #"["username:alice"]"#,
                "owner", "alice", "updated", 1_000)
            let store = RedisInstallationStore(redis: redis, keys: keys)
            let old = try #require(try await store.installation(id: "old1"))
            #expect(
                old
                    == Installation(
                        id: "old1", platform: .apns, handle: "h-old", tags: ["username:alice"], owner: "alice", updatedAt: 1_000))
            #expect(old.apnsEnvironment == .production)
            // A value this build does not know is not guessed at: the record is passed over.
            try await redis.send(
                "HSET", keys.installation("odd1"), "platform", "apns", "handle", "h-odd", "tags", "[]", "owner", "alice",
                "updated", 1, "environment", "staging")
            #expect(try await store.installations(ids: ["old1", "odd1"]).map(\.id) == ["old1"])
            // An encoding from before the field decodes as production too.
            let encoded = #"{"id":"i","platform":"apns","handle":"h","tags":[],"owner":"alice","updatedAt":5}"#
            #expect(try JSONDecoder().decode(Installation.self, from: Data(encoded.utf8)).apnsEnvironment == .production)
            await redis.close()
        }
    }
}
