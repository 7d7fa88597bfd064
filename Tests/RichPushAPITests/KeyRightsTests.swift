import APITestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushApps
import RichPushCore
import RichPushStorage
import Testing

/// The rights Azure Notification Hubs gives its keys, on API keys: `listen` registers devices and
/// nothing else; `manage` reads and changes the app's credentials, only on an admin's key, never
/// implied by `admin`, and never another app or the operator's own acts.
@Suite("Key rights: listen and manage")
struct KeyRightsTests {
    static func key(_ fixture: APIFixture, _ user: String, _ scopes: Set<APIKey.Scope>) async throws -> HTTPFields {
        let token = try #require(
            try await RedisAPIKeyStore(redis: fixture.redis, keys: fixture.keys).create(user: user, scopes: scopes, label: "t")?.token)
        return [.authorization: "Bearer \(token)", .contentType: "application/json"]
    }

    @Test func aListenKeyRegistersDevicesAndDoesNothingElse() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let listen = try await Self.key(fixture, "alice", [.listen])
            try await fixture.test { client in
                let id = try await client.execute(uri: "/api/register?handle=abcd", method: .post, headers: listen) { response in
                    try JSONDecoder().decode(String.self, from: Data(buffer: response.body))
                }
                let put = try await client.execute(
                    uri: "/api/register/\(id)", method: .put, headers: listen,
                    body: APIFixture.json(["Platform": "apns", "Handle": "abcd", "Tags": ["news"]]))
                #expect(put.status == .ok)
                let send = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: listen,
                    body: APIFixture.json(["message": "m", "richType": "text", "payload": "p"]))
                #expect(send.status == .forbidden && send.errorCode == "insufficient_scope")
                #expect(
                    try await client.execute(uri: "/api/notifications", method: .get, headers: listen).errorCode == "insufficient_scope")
                #expect(try await client.execute(uri: "/api/webhooks", method: .get, headers: listen).errorCode == "insufficient_scope")
                #expect(try await client.execute(uri: "/api/register/\(id)", method: .delete, headers: listen).status == .ok)
            }
        }
    }

    @Test func aManageKeyChangesItsOwnAppOnly() async throws {
        try await withRedisServer { server in
            var fixture = try await AppRoutesTests.fixture(server)
            fixture.configuration.operatorToken = OperatorToken(text: AppRoutesTests.token)
            let manage = try await Self.key(fixture, "root", [.manage])
            let adminOnly = try await Self.key(fixture, "root", [.admin])
            let userManage = try await Self.key(fixture, "alice", [.manage])
            try await fixture.test { client in
                #expect(try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "shop"]).status == .created)
                let listed = try await AppRoutesTests.send(client, .get, "/api/apps", headers: manage)
                #expect(
                    listed.status == .ok && (listed.json["apps"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["default"])
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/default", headers: manage).status == .ok)
                let changed = try await AppRoutesTests.send(
                    client, .patch, "/api/apps/default", ["apns": AppRoutesTests.apns()], headers: manage)
                #expect(changed.status == .ok && (changed.json["apns"] as? [String: Any])?["bundleId"] as? String == "com.example.shop")
                // Another app is as good as absent; creating and removing apps are the operator's.
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/shop", headers: manage).status == .notFound)
                #expect(try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["name": "x"], headers: manage).status == .notFound)
                #expect(
                    try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "news"], headers: manage).errorCode == "operator_only")
                #expect(try await AppRoutesTests.send(client, .delete, "/api/apps/shop", headers: manage).errorCode == "operator_only")
                // admin does not imply manage, and manage is an admin's right only.
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps", headers: adminOnly).errorCode == "insufficient_scope")
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps", headers: userManage).errorCode == "insufficient_scope")
                // A manage key is no user credential beyond what its user may do: it does not send.
                let send = try await client.execute(
                    uri: "/api/notifications", method: .post, headers: manage,
                    body: APIFixture.json(["message": "m", "richType": "text", "payload": "p"]))
                #expect(send.errorCode == "insufficient_scope")
            }
        }
    }
}
