import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import Testing

/// `Cache-Control: no-store` on every answer to a request that carried credentials or needed
/// them, errors included; a payload keeps its own caching, and open routes are left alone.
@Suite("Cache-Control")
struct CacheControlTests {
    @Test func everyAuthenticatedAnswerIsNoStore() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let alice = APIFixture.basic("alice"), json: HTTPFields = [.contentType: "application/json"]
                let created = try await client.sendImage("alice")
                let id = try #require(created.json["id"] as? String)
                #expect(created.status == .accepted && created.headers[.cacheControl] == "no-store")
                let answers:
                    [(
                        what: String, method: HTTPRequest.Method, path: String, headers: HTTPFields, body: ByteBuffer?,
                        status: HTTPResponse.Status
                    )] = [
                        ("list", .get, "/api/notifications", alice, nil, .ok),
                        ("status", .get, "/api/notifications/\(id)/status", alice, nil, .ok),
                        ("registration", .post, "/api/register", alice, nil, .ok),
                        ("webhooks", .get, "/api/webhooks", alice, nil, .ok),
                        ("no credentials", .get, "/api/notifications", [:], nil, .unauthorized),
                        ("wrong password", .get, "/api/notifications", APIFixture.basic("alice", "nope"), nil, .unauthorized),
                        ("not a RichPush key", .get, "/api/notifications", [.authorization: "Bearer nope"], nil, .unauthorized),
                        (
                            "another tag", .post, "/api/notifications", alice + json,
                            APIFixture.json(["richType": "text", "payload": "p", "target": "news"]), .forbidden
                        ),
                        ("someone else's", .get, "/api/notifications/\(id)/status", APIFixture.basic("bob"), nil, .notFound),
                        ("no such route", .get, "/api/nothing-here", alice, nil, .notFound),
                        ("wrong method", .put, "/api/notifications", alice, nil, .methodNotAllowed),
                        ("bad id", .get, "/api/notifications/x", alice, nil, .badRequest),
                        (
                            "bad payload type", .post, "/api/notifications", alice + json,
                            APIFixture.json(["richType": "text", "payload": "p", "contentType": "text/html"]),
                            .unsupportedMediaType
                        ),
                        ("credentials on an open route", .get, "/health/live", alice, nil, .ok),
                    ]
                for answer in answers {
                    try await client.execute(uri: answer.path, method: answer.method, headers: answer.headers, body: answer.body) {
                        response in
                        #expect(response.status == answer.status, "\(answer.what): \(response.status)")
                        #expect(
                            response.headers[.cacheControl] == "no-store", "\(answer.what): \(response.headers[.cacheControl] ?? "none")")
                    }
                }
                // The payload keeps its own: immutable by content hash, for the device's own cache.
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: alice) { response in
                    #expect(response.status == .ok && response.headers[.cacheControl] == "private, max-age=3600")
                }
                // Open routes without credentials are no caller's business.
                try await client.execute(uri: "/health/live", method: .get) { #expect($0.headers[.cacheControl] == nil) }
            }
        }
    }
}
