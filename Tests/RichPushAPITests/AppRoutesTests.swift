import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushApps
import RichPushCore
import RichPushNH
import RichPushStorage
import Testing

/// `/api/apps`, the operator's routes: who may call them, what they store (sealed) and show
/// (fingerprints), and that every mistake is named and leaves nothing half-written.
@Suite("App routes")
struct AppRoutesTests {
    static let token = "operator-token-of-the-tests-0123456789abcdef"
    static let operatorHeaders: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]

    /// The fixture with the operator's routes on (a token and a store with a key ring).
    static func fixture(_ server: RedisServer, token: String? = AppRoutesTests.token) async throws -> APIFixture {
        var fixture = try await APIFixture(server: server) { configuration in
            configuration.operatorToken = token.flatMap(OperatorToken.init(text:))
        }
        fixture.apps = RedisAppStore(redis: fixture.redis, keys: AppKeys(prefix: fixture.keys.prefix), ring: KeyRing(current: .generate()))
        return fixture
    }

    static func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ object: [String: Any]? = nil,
        headers: HTTPFields = AppRoutesTests.operatorHeaders
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers, body: object.map(APIFixture.json))
    }

    static func apns(_ pem: String = TestCredentials.p8(), bundle: String = "com.example.shop") -> [String: Any] {
        ["key": pem, "keyId": "KEYID12345", "teamId": "TEAMID1234", "bundleId": bundle]
    }

    @Test func onlyTheOperatorTokenOpensTheRoutes() async throws {
        try await withRedisServer { server in
            try await Self.fixture(server, token: nil).test { client in
                #expect(try await Self.send(client, .get, "/api/apps", headers: [:]).status == .unauthorized)
                let off = try await Self.send(client, .get, "/api/apps")
                #expect(
                    off.status == .forbidden && off.errorCode == "operator_routes_off" && off.errorMessage.contains("--operator-token-file")
                )
            }
            let fixture = try await Self.fixture(server)
            let key = try #require(try await RedisAPIKeyStoreFactory.adminKey(fixture))
            try await fixture.test { client in
                let none = try await Self.send(client, .get, "/api/apps", headers: [:])
                #expect(none.status == .unauthorized && none.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                // An admin user is not the operator, by password or by API key.
                #expect(try await Self.send(client, .get, "/api/apps", headers: APIFixture.basic("root")).status == .unauthorized)
                #expect(try await Self.send(client, .get, "/api/apps", headers: [.authorization: "Bearer \(key)"]).status == .forbidden)
                #expect(
                    try await Self.send(client, .get, "/api/apps", headers: [.authorization: "Bearer \(Self.token)x"]).status == .forbidden)
                let listed = try await Self.send(client, .get, "/api/apps")
                #expect(listed.status == .ok)
                #expect((listed.json["apps"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["default"])
                // The users' routes are unchanged: the operator token is not a user's credential.
                #expect(try await Self.send(client, .get, "/api/notifications").status == .unauthorized)
            }
        }
    }

    @Test func anAppsLifeShowsNoSecret() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server)
            let pem = TestCredentials.p8()
            let account = try TestCredentials.serviceAccount()
            let secrets = [String(pem.split(separator: "\n")[1]), "PRIVATE KEY", "private_key"]
            try await fixture.test { client in
                let document = try OpenAPIDocument.load()
                let accountObject = try #require(try JSONSerialization.jsonObject(with: Data(account.utf8)) as? [String: Any])
                let created = try await Self.send(
                    client, .post, "/api/apps",
                    ["id": "shop", "name": "Shop", "apns": Self.apns(pem), "fcm": ["serviceAccount": accountObject]])
                #expect(created.status == .created && created.headers[.location] == "/api/apps/shop")
                let body = String(buffer: created.body)
                #expect(!secrets.contains { body.contains($0) }, "\(body)")
                #expect((created.json["apns"] as? [String: Any])?["bundleId"] as? String == "com.example.shop")
                #expect((created.json["fcm"] as? [String: Any])?["projectId"] as? String == "richpush-apps")
                // Every app gets a VAPID key pair: its public key (65 bytes, base64url) is for browsers.
                let publicKey = try #require((created.json["webPush"] as? [String: Any])?["publicKey"] as? String)
                #expect(publicKey.utf8.count == 87)
                #expect(created.json["version"] as? Int == 1)

                // A new APNs key: a new fingerprint; FCM removed; a Web Push contact on the same pair.
                let before = (created.json["apns"] as? [String: Any])?["keyFingerprint"] as? String
                let changed = try await Self.send(
                    client, .patch, "/api/apps/shop",
                    ["apns": Self.apns(), "fcm": NSNull(), "webPush": ["subject": "mailto:ops@example.com"]])
                #expect(changed.status == .ok && changed.json["version"] as? Int == 2)
                #expect((changed.json["apns"] as? [String: Any])?["keyFingerprint"] as? String != before)
                #expect(changed.json["fcm"] == nil)
                #expect((changed.json["webPush"] as? [String: Any])?["publicKey"] as? String == publicKey)
                #expect((changed.json["webPush"] as? [String: Any])?["subject"] as? String == "mailto:ops@example.com")

                let listed = try await Self.send(client, .get, "/api/apps")
                #expect((listed.json["apps"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["default", "shop"])
                #expect(!secrets.contains { String(buffer: listed.body).contains($0) })

                // The default app is changed like any other, never removed.
                let defaultApp = try await Self.send(client, .patch, "/api/apps/default", ["fcm": ["serviceAccount": account]])
                #expect(defaultApp.status == .ok && (defaultApp.json["fcm"] as? [String: Any])?["projectId"] as? String == "richpush-apps")
                let removeDefault = try await Self.send(client, .delete, "/api/apps/default")
                #expect(removeDefault.status == .conflict && removeDefault.errorCode == "default_app")
                // Each answer is the one openapi.yaml describes.
                try document.check(template: "/api/apps", method: .post, response: created)
                try document.check(template: "/api/apps/{id}", method: .patch, response: changed)
                try document.check(template: "/api/apps", method: .get, response: listed)
                try document.check(template: "/api/apps/{id}", method: .delete, response: removeDefault)
                try document.check(
                    template: "/api/apps/{id}", method: .get, response: try await Self.send(client, .get, "/api/apps/default"))

                // Its Notification Hubs rules are shown by name and rights, never a key.
                let rules = NHAccessRule.defaults()
                let store = try #require(fixture.apps as? RedisAppStore)
                _ = try await store.update(id: try AppID("shop"), change: AppChange(nhRules: .some(rules)))
                let withRules = try await Self.send(client, .get, "/api/apps/shop")
                #expect(
                    (withRules.json["nhRules"] as? [String: [String]])
                        == [
                            "DefaultListenSharedAccessSignature": ["Listen"],
                            "DefaultFullSharedAccessSignature": ["Listen", "Manage", "Send"],
                        ],
                    "\(withRules.json)")
                #expect(
                    !rules.contains {
                        String(buffer: withRules.body).contains($0.primaryKey) || String(buffer: withRules.body).contains($0.secondaryKey)
                    })
                try document.check(template: "/api/apps/{id}", method: .get, response: withRules)

                #expect(try await Self.send(client, .delete, "/api/apps/shop").status == .noContent)
                #expect(try await Self.send(client, .get, "/api/apps/shop").status == .notFound)
                #expect(try await Self.send(client, .delete, "/api/apps/shop").status == .notFound)
            }
        }
    }

    @Test func badInputIsRefusedByNameAndNothingIsHalfWritten() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server)
            let noKey = try TestCredentials.serviceAccount { $0.removeValue(forKey: "private_key") }
            try await fixture.test { client in
                let cases: [(String, [String: Any], HTTPResponse.Status, String, String)] = [
                    ("no id", ["name": "x"], .badRequest, "missing_field", "'id'"),
                    ("bad id", ["id": "Shop Now"], .unprocessableContent, "bad_app_id", "lowercase"),
                    ("unknown member", ["id": "shop", "color": "red"], .badRequest, "unknown_field", "'color'"),
                    ("apns unknown member", ["id": "shop", "apns": ["key": "x", "p12": "y"]], .badRequest, "unknown_field", "apns.p12"),
                    (
                        "not P-256", ["id": "shop", "apns": Self.apns(TestCredentials.p384())], .unprocessableContent,
                        "invalid_credentials", "P-256"
                    ),
                    (
                        "bad key id", ["id": "shop", "apns": Self.apns().merging(["keyId": "short"]) { $1 }], .unprocessableContent,
                        "invalid_credentials", "key id"
                    ),
                    (
                        "bundle id with spaces", ["id": "shop", "apns": Self.apns(bundle: "com.example my app")], .unprocessableContent,
                        "invalid_credentials", "bundleId"
                    ),
                    (
                        "apns field missing", ["id": "shop", "apns": ["key": TestCredentials.p8()]], .unprocessableContent, "missing_field",
                        "apns.keyId"
                    ),
                    (
                        "account without key", ["id": "shop", "apns": Self.apns(), "fcm": ["serviceAccount": noKey]], .unprocessableContent,
                        "invalid_credentials", "private_key"
                    ),
                    (
                        "subject not a URI", ["id": "shop", "webPush": ["subject": "ops@example.com"]], .unprocessableContent,
                        "invalid_credentials", "mailto:"
                    ),
                    (
                        "bad VAPID key", ["id": "shop", "webPush": ["privateKey": "AAAA"]], .unprocessableContent, "invalid_credentials",
                        "P-256"
                    ),
                    ("default", ["id": "default"], .conflict, "app_exists", "default"),
                ]
                for (name, object, status, code, words) in cases {
                    let response = try await Self.send(client, .post, "/api/apps", object)
                    #expect(
                        response.status == status && response.errorCode == code && response.errorMessage.contains(words),
                        "\(name): \(response.status) \(response.errorCode ?? "-") \(response.errorMessage)")
                    #expect(!String(buffer: response.body).contains("PRIVATE KEY"), "\(name)")
                }
                // None of them left an app behind (the one with good APNs and a bad FCM included).
                #expect(try await Self.send(client, .get, "/api/apps/shop").status == .notFound)
                let malformed = try await client.execute(
                    uri: "/api/apps", method: .post, headers: Self.operatorHeaders, body: ByteBuffer(string: "{\"id\": "))
                #expect(malformed.status == .badRequest && malformed.errorCode == "malformed_json")
                let deep = try await client.execute(
                    uri: "/api/apps", method: .post, headers: Self.operatorHeaders,
                    body: ByteBuffer(string: "{\"id\": \"shop\", \"fcm\": {\"serviceAccount\": {\"a\": {\"b\": {\"c\": 1}}}}}"))
                #expect(deep.status == .badRequest && deep.errorCode == "malformed_json")
                let large = try await client.execute(
                    uri: "/api/apps", method: .post, headers: Self.operatorHeaders,
                    body: ByteBuffer(string: "{\"id\": \"shop\", \"name\": \"" + String(repeating: "a", count: 70_000) + "\"}"))
                #expect(large.status == .contentTooLarge)
                #expect(try await Self.send(client, .get, "/api/apps/Bad_Id").errorCode == "bad_app_id")
                #expect(try await Self.send(client, .patch, "/api/apps/nope", ["name": "x"]).status == .notFound)
                // A refused change leaves the app as it was.
                #expect(try await Self.send(client, .post, "/api/apps", ["id": "shop", "apns": Self.apns()]).status == .created)
                let refused = try await Self.send(client, .patch, "/api/apps/shop", ["name": "New", "apns": Self.apns(bundle: "a b")])
                #expect(refused.status == .unprocessableContent)
                let shown = try await Self.send(client, .get, "/api/apps/shop")
                #expect(shown.json["name"] as? String == "shop" && shown.json["version"] as? Int == 1)
            }
        }
    }

    @Test func theDefaultLocaleIsSetShownAndRemoved() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server)
            try await fixture.test { client in
                let created = try await Self.send(client, .post, "/api/apps", ["id": "shop", "defaultLocale": "fr_ca"])
                #expect(created.status == .created && created.json["defaultLocale"] as? String == "fr-CA", "\(created.json)")
                let bad = try await Self.send(client, .patch, "/api/apps/shop", ["defaultLocale": "french"])
                #expect(bad.status == .unprocessableContent && bad.errorMessage.contains("defaultLocale"), "\(bad.errorMessage)")
                let wrong = try await Self.send(client, .patch, "/api/apps/shop", ["defaultLocale": 7])
                #expect(wrong.status == .unprocessableContent && wrong.errorCode == "wrong_type")
                #expect(
                    try await Self.send(client, .get, "/api/apps/shop").json["defaultLocale"] as? String == "fr-CA",
                    "a refused change keeps it")
                let changed = try await Self.send(client, .patch, "/api/apps/shop", ["defaultLocale": "de"])
                #expect(changed.json["defaultLocale"] as? String == "de")
                let named = try await Self.send(client, .patch, "/api/apps/shop", ["name": "Shop"])
                #expect(named.json["defaultLocale"] as? String == "de", "a change of something else keeps it")
                let removed = try await Self.send(client, .patch, "/api/apps/shop", ["defaultLocale": NSNull()])
                #expect(removed.status == .ok && removed.json["defaultLocale"] == nil, "\(removed.json)")
                #expect(
                    try await Self.send(client, .post, "/api/apps", ["id": "shop2", "defaultLocale": NSNull()]).status
                        == .unprocessableContent)
            }
        }
    }

    /// An app's default delivery: set, shown, refused when it is not silent, alert or auto, taken
    /// by a send that names none (kept in its record) and not by one that names its own; removed
    /// with null.
    @Test func theDefaultDeliveryAppliesToSendsThatNameNone() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server)
            try await fixture.test { client in
                #expect(
                    try await Self.send(client, .patch, "/api/apps/default", ["defaultDelivery": "loud"]).status == .unprocessableContent)
                let wrong = try await Self.send(client, .patch, "/api/apps/default", ["defaultDelivery": true])
                #expect(wrong.status == .unprocessableContent && wrong.errorCode == "wrong_type")
                let set = try await Self.send(client, .patch, "/api/apps/default", ["defaultDelivery": "alert"])
                #expect(set.status == .ok && set.json["defaultDelivery"] as? String == "alert", "\(set.json)")
                let headers = APIFixture.basic("alice") + [.contentType: "application/json"]
                var modes: [PushRenderer.Mode?] = []
                for body in [["richType": "text", "payload": "p"], ["richType": "text", "payload": "p", "delivery": "silent"]] {
                    let sent = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: headers, body: APIFixture.json(body))
                    #expect(sent.status == .accepted, "\(String(buffer: sent.body))")
                    let id = try #require((sent.json["id"] as? String).flatMap(Int.init))
                    modes.append(try await fixture.notifications.notification(id: id)?.delivery.mode)
                }
                #expect(modes == [.alert, .silent], "the app's default, then the send's own")
                let removed = try await Self.send(client, .patch, "/api/apps/default", ["defaultDelivery": NSNull()])
                #expect(removed.status == .ok && removed.json["defaultDelivery"] == nil, "\(removed.json)")
            }
        }
    }
}

/// An admin API key, to show that a user's key is not the operator's.
enum RedisAPIKeyStoreFactory {
    static func adminKey(_ fixture: APIFixture) async throws -> String? {
        try await RedisAPIKeyStore(redis: fixture.redis, keys: fixture.keys).create(user: "root", scopes: [.admin], label: "t")?.token
    }
}
