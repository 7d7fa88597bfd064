import AsyncHTTPClient
import Foundation
import Hiredis
import Logging
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushHTTP2
import RichPushSimTLS
import RichPushStorage
import RichPushWorker
import ServiceLifecycle
import Synchronization
import Testing
import _CryptoExtras

/// One notification to a tag with an iOS device and an Android device: each gets it once, in
/// its own format (the APNs payload through the hub, an FCM data message through fcm-sim).
@Suite("Mixed platforms")
struct MixedPlatformTests {
    @Test func aTagWithIOSAndAndroidDevicesReachesEachOnceInItsOwnFormat() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let store = RedisInstallationStore(redis: pipeline.redis, keys: pipeline.keys)
                let iosHandle = "\(pipeline.prefix)-ios"
                _ = try await store.save(
                    Installation(id: "ios1", platform: .apns, handle: iosHandle, tags: ["username:alice"], owner: "alice", updatedAt: 0),
                    limits: RegistrationLimits())
                _ = try await store.save(
                    Installation(
                        id: "android1", platform: .fcm, handle: "android-token-1", tags: ["username:alice"], owner: "alice",
                        updatedAt: 0), limits: RegistrationLimits())
                let hub = RedisSubscriber(configuration: server.configuration)
                try await hub.ssubscribe([SimulatedHubAdapter.channel(prefix: pipeline.prefix, handle: iosHandle)])

                let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                try await LocalFCM.with(
                    projectID: "richpush-mixed", clientEmail: "fcm@richpush-mixed.iam.gserviceaccount.com",
                    publicKeyPEM: key.publicKey.pemRepresentation
                ) { local in
                    let accountJSON: [String: Any] = [
                        "type": "service_account", "project_id": "richpush-mixed", "private_key_id": "k1",
                        "private_key": key.pkcs8PEMRepresentation, "client_email": "fcm@richpush-mixed.iam.gserviceaccount.com",
                        "token_uri": LocalFCM.tokenURI(port: local.port),
                    ]
                    let account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: accountJSON)))
                    do {
                        let fcm = RichPushWorkerConfiguration.FCMSettings(client: local.client, http: local.http, account: account)
                        let id = try await withWorker(pipeline.worker(fcm: fcm)) {
                            let id = try await pipeline.send(json: ["message": "to both", "richType": "text", "payload": "hi"])
                            var iosMessages: [String] = []
                            for await message in hub.messages {
                                iosMessages.append(String(decoding: message.payload, as: UTF8.self))
                                break
                            }
                            try await waitUntil(timeout: .seconds(60), "both devices to be sent to") {
                                (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 2
                            }
                            // iOS: the APNs payload in the hub's envelope.
                            #expect(iosMessages.count == 1 && iosMessages[0].contains(#""content-available":1"#), "\(iosMessages)")
                            return id
                        }
                        // Android: one FCM data message with the notification's id.
                        let messages = local.accepted()
                        #expect(messages.count == 1 && messages.first?.token == "android-token-1")
                        let body = try #require(
                            messages.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] })
                        let message = body["message"] as? [String: Any]
                        #expect((message?["data"] as? [String: String])?["richId"] == String(id))
                        #expect((message?["android"] as? [String: String])?["priority"] == "HIGH")
                    } catch {
                        await hub.close()
                        throw error
                    }
                    await hub.close()
                }
            }
        }
    }
}
