import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import Synchronization
import Testing

@testable import RichPushApps

/// Apps on a real Redis: what is stored is sealed, opens only with the right key-encryption key,
/// survives a rotation, and every change is one atomic, versioned, announced write.
@Suite("App store")
struct AppStoreTests {
    static func store(_ connection: RedisConnection, prefix: String, _ ring: KeyRing?) -> RedisAppStore {
        RedisAppStore(redis: connection, keys: AppKeys(prefix: prefix), ring: ring)
    }

    static func apns(_ pem: String = TestCredentials.p8(), bundle: String = "com.example.shop") throws -> APNSCredential {
        try APNSCredential(keyPEM: pem, keyID: "KEYID12345", teamID: "TEAMID1234", bundleID: bundle)
    }

    @Test func credentialsAreSealedAtRestAndShownOnlyAsFingerprints() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let ring = KeyRing(current: .generate())
            let store = Self.store(connection, prefix: prefix, ring)
            let pem = TestCredentials.p8()
            let account = try TestCredentials.serviceAccount()
            let created = try await store.create(
                id: try AppID("shop"), name: "Shop",
                credentials: AppCredentials(apns: try Self.apns(pem), fcm: try FCMCredential(serviceAccountJSON: account)))
            #expect(created.version == 1)
            #expect(created.credentials[.apns]?["bundleId"] == "com.example.shop")
            #expect(created.credentials[.apns]?["keyFingerprint"]?.hasPrefix("SHA256:") == true)
            #expect(created.credentials[.fcm]?["projectId"] == "richpush-apps")
            // Nothing secret in Redis in the clear: not the .p8's body, not the service account's key.
            let stored =
                try await connection.send("HGETALL", "\(prefix):{apps}:app:shop").array?.compactMap(\.string).joined(separator: "\n") ?? ""
            let keyBody = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
            #expect(!stored.isEmpty && !stored.contains(keyBody) && !stored.contains("PRIVATE KEY") && !stored.contains("private_key"))
            // The summary shows nothing secret either.
            let shown = "\(created.credentials)"
            #expect(!shown.contains(keyBody) && !shown.contains("PRIVATE"))
            // And it opens again to what went in.
            let opened = try #require(try await store.credentials(id: try AppID("shop")))
            #expect(opened.version == 1 && opened.credentials.apns?.keyPEM == pem && opened.credentials.fcm?.serviceAccountJSON == account)
            await connection.close()
        }
    }

    @Test func aWrongKeyEncryptionKeyIsAClearErrorNotGarbage() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let right = KeyEncryptionKey.generate(), wrong = KeyEncryptionKey.generate()
            _ = try await Self.store(connection, prefix: prefix, KeyRing(current: right))
                .create(id: try AppID("shop"), name: "Shop", credentials: AppCredentials(apns: try Self.apns()))
            let check = try await Self.store(connection, prefix: prefix, KeyRing(current: right)).checkKeyRing()
            #expect(check.sealed == 1 && check.byKey == [right.id: 1])
            await #expect(throws: AppError.unknownKeyEncryptionKey(id: right.id)) {
                try await Self.store(connection, prefix: prefix, KeyRing(current: wrong)).checkKeyRing()
            }
            await #expect(throws: AppError.noKeyEncryptionKey) {
                _ = try await Self.store(connection, prefix: prefix, nil).credentials(id: try AppID("shop"))
            }
            // Listing needs no key: summaries are not secret.
            #expect(try await Self.store(connection, prefix: prefix, nil).list().map(\.id.rawValue) == ["default", "shop"])
            await connection.close()
        }
    }

    @Test func alteredOrMovedSealedValuesDoNotOpen() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let ring = KeyRing(current: .generate())
            let store = Self.store(connection, prefix: prefix, ring)
            for id in ["shop", "news"] {
                _ = try await store.create(id: try AppID(id), name: id, credentials: AppCredentials(apns: try Self.apns()))
            }
            // news's sealed APNs key copied into shop: bound to its app, it does not open there.
            let newsSealed = try #require(try await connection.send("HGET", "\(prefix):{apps}:app:news", "apns").string)
            try await connection.send("HSET", "\(prefix):{apps}:app:shop", "apns", newsSealed)
            await #expect(throws: AppError.unreadable(app: try AppID("shop"), field: "apns")) {
                _ = try await store.credentials(id: try AppID("shop"))
            }
            // One flipped character of the ciphertext: refused, not garbage.
            var altered = Array(newsSealed)
            altered[altered.count - 6] = altered[altered.count - 6] == "A" ? "B" : "A"
            try await connection.send("HSET", "\(prefix):{apps}:app:news", "apns", String(altered))
            await #expect(throws: AppError.unreadable(app: try AppID("news"), field: "apns")) {
                _ = try await store.credentials(id: try AppID("news"))
            }
            await connection.close()
        }
    }

    @Test func rotatingTheKeyEncryptionKey() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let old = KeyEncryptionKey.generate(), new = KeyEncryptionKey.generate()
            let apns = try Self.apns(), account = try FCMCredential(serviceAccountJSON: try TestCredentials.serviceAccount())
            _ = try await Self.store(connection, prefix: prefix, KeyRing(current: old)).create(
                id: try AppID("shop"), name: "Shop", credentials: AppCredentials(apns: apns))
            _ = try await Self.store(connection, prefix: prefix, KeyRing(current: old)).update(
                id: .default, change: AppChange(set: AppCredentials(fcm: account)))
            // Step 1: every process gets the new key as current and the old one as previous.
            let rotating = Self.store(connection, prefix: prefix, KeyRing(current: new, previous: [old]))
            #expect(try await rotating.checkKeyRing().byKey == [old.id: 2])
            // A change made meanwhile is sealed under the new key.
            let replaced = try Self.apns(bundle: "com.example.shop2")
            _ = try await rotating.update(id: try AppID("shop"), change: AppChange(set: AppCredentials(apns: replaced)))
            #expect(try await rotating.checkKeyRing().byKey == [new.id: 1, old.id: 1])
            // Step 2: rekey re-seals what is left; then the old key can go.
            #expect(try await rotating.rekey() == 1)
            #expect(try await rotating.rekey() == 0)
            let after = Self.store(connection, prefix: prefix, KeyRing(current: new))
            #expect(try await after.checkKeyRing().byKey == [new.id: 2])
            #expect(try await after.credentials(id: try AppID("shop"))?.credentials.apns == replaced)
            #expect(try await after.credentials(id: .default)?.credentials.fcm == account)
            await #expect(throws: AppError.unknownKeyEncryptionKey(id: new.id)) {
                try await Self.store(connection, prefix: prefix, KeyRing(current: old)).checkKeyRing()
            }
            await connection.close()
        }
    }

    @Test func changesAreVersionedAndAnnounced() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let store = Self.store(connection, prefix: prefix, KeyRing(current: .generate()))
            let subscriber = RedisSubscriber(configuration: server.configuration)
            let heard = Mutex<[String]>([])
            let listener = Task {
                for await message in subscriber.messages { heard.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }
            }
            try await subscriber.subscribe([store.keys.changes])
            let shop = try AppID("shop")
            // The default app is listed before anything was stored for it, and made by its first change.
            #expect(try await store.list() == [.implicitDefault])
            #expect(try await store.version(id: .default) == 0)
            await #expect(throws: AppError.exists(.default)) {
                _ = try await store.create(id: .default, name: "x", credentials: AppCredentials())
            }
            await #expect(throws: AppError.cannotRemoveDefault) { _ = try await store.remove(id: .default) }
            await #expect(throws: AppError.notFound(shop)) { _ = try await store.update(id: shop, change: AppChange(name: "Shop")) }
            _ = try await store.create(id: shop, name: "Shop", credentials: AppCredentials(apns: try Self.apns()))
            await #expect(throws: AppError.exists(shop)) {
                _ = try await store.create(id: shop, name: "Shop", credentials: AppCredentials())
            }
            let renamed = try await store.update(id: shop, change: AppChange(name: "Shop!", remove: [.apns]))
            #expect(renamed.version == 2 && renamed.name == "Shop!" && renamed.credentials.isEmpty)
            #expect(try await store.version(id: shop) == 2)
            #expect(try await store.remove(id: shop))
            #expect(try await !store.remove(id: shop))
            #expect(try await store.version(id: shop) == nil)
            // Create, change, remove: each announced with the app's id.
            try await waitUntil(timeout: .seconds(60), "three announcements") { heard.withLock { $0.count >= 3 } }
            #expect(heard.withLock { $0 } == ["shop", "shop", "shop"])
            await subscriber.close()
            listener.cancel()
            await connection.close()
        }
    }
}
