import _CryptoExtras
import AsyncHTTPClient
import Foundation
import Hiredis
import Logging
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushStorage
import RichPushWorker
import ServiceLifecycle
import Synchronization
import Testing

/// One notification to a tag with an iOS device and an Android device: each gets it once, in
/// its own format (the APNs payload through the hub, an FCM data message through fcm-sim).
@Suite("Mixed platforms")
struct MixedPlatformTests {
    @Test func aTagWithIOSAndAndroidDevicesReachesEachOnceInItsOwnFormat() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let store = RedisInstallationStore(redis: pipeline.redis, keys: pipeline.keys)
                let iosHandle = "\(pipeline.prefix)-ios"
                _ = try await store.save(Installation(id: "ios1", platform: .apns, handle: iosHandle, tags: ["username:alice"], owner: "alice", updatedAt: 0),
                                         limits: RegistrationLimits())
                _ = try await store.save(Installation(id: "android1", platform: .fcm, handle: "android-token-1", tags: ["username:alice"], owner: "alice",
                                                      updatedAt: 0), limits: RegistrationLimits())
                let hub = RedisSubscriber(configuration: server.configuration)
                try await hub.subscribe([SimulatedHubAdapter.channel(prefix: pipeline.prefix, handle: iosHandle)])

                let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                let port = try RedisServer.freePort()
                let accountJSON: [String: Any] = ["type": "service_account", "project_id": "richpush-mixed", "private_key_id": "k1",
                                                  "private_key": key.pkcs8PEMRepresentation, "client_email": "fcm@richpush-mixed.iam.gserviceaccount.com",
                                                  "token_uri": "http://127.0.0.1:\(port)/token"]
                let account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: accountJSON)))
                let accepted = Mutex<[FCMSimulator.Accepted]>([])
                let simulator = FCMSimulator(
                    configuration: FCMSimulator.Configuration(
                        projectID: "richpush-mixed",
                        check: try FCMAssertionCheck(clientEmail: account.clientEmail, keyID: "k1", publicKeyPEM: account.publicKeyPEM,
                                                     audiences: [account.tokenURI])),
                    forward: { message in accepted.withLock { $0.append(message) } })
                var logger = Logger(label: "fcm-sim")
                logger.logLevel = .error
                // Its own start, not just something listening on the port (a parallel test may have taken it).
                let running = Mutex(false)
                let application = try simulator.application(port: port) { _ in running.withLock { $0 = true } }
                let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
                let http = HTTPClient(eventLoopGroupProvider: .singleton)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    defer { tasks.cancelAll() }
                    try await waitUntil(timeout: .seconds(10), "fcm-sim to start") { running.withLock { $0 } }
                    let fcm = RichPushWorkerConfiguration.FCMSettings(http: http, baseURL: "http://127.0.0.1:\(port)", account: account)
                    let id = try await withWorker(pipeline.worker(fcm: fcm)) {
                        let id = try await pipeline.send(json: ["message": "to both", "richType": "text", "payload": "hi"])
                        var iosMessages: [String] = []
                        for await message in hub.messages {
                            iosMessages.append(String(decoding: message.payload, as: UTF8.self))
                            break
                        }
                        try await waitUntil(timeout: .seconds(20), "both devices to be sent to") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 2
                        }
                        // iOS: the APNs payload in the hub's envelope.
                        #expect(iosMessages.count == 1 && iosMessages[0].contains(#""content-available":1"#), "\(iosMessages)")
                        return id
                    }
                    // Android: one FCM data message with the notification's id.
                    let messages = accepted.withLock { $0 }
                    #expect(messages.count == 1 && messages.first?.token == "android-token-1")
                    let body = try #require(messages.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] })
                    let message = body["message"] as? [String: Any]
                    #expect((message?["data"] as? [String: String])?["richId"] == String(id))
                    #expect((message?["android"] as? [String: String])?["priority"] == "HIGH")
                    await group.triggerGracefulShutdown()
                }
                try await http.shutdown()
                await hub.close()
            }
        }
    }
}
