import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushSimulator
import Testing

/// Android devices in the device simulator: they register with platform `fcm` and an FCM-shaped
/// token, get the FCM data message (here through the hub, as in demos), read its `data`, fetch and
/// post their own notification with More, like the iOS devices beside them.
@Suite("Android devices")
struct AndroidDeviceTests {
    @Test func iPhonesAndAndroidPhonesEachGetTheirOwnFormatAndOpenTheImage() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let out = server.directory.appendingPathComponent("device")
                let simulator = try pipeline.simulator(devices: 4, appState: .mixed, out: out, platforms: .mixed)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        let id = try await pipeline.send(json: [
                            "message": "Check this image out!", "richType": "img",
                            "payload": Data(RichPushFlowTests.image).base64EncodedString(),
                        ])
                        try await waitUntil(timeout: .seconds(60), "four devices to open the image") { log.count("opened") == 4 }
                        let status = try await pipeline.status(id)
                        #expect((status["counts"] as? [String: Int])?["failed"] == 0)
                        #expect((status["devices"] as? [[String: Any]])?.count == 4)
                        for device in 0..<4 {
                            let events = log.all.filter { $0.device == device && $0.richId == String(id) }
                            #expect(
                                events.map(\.event) == [
                                    "received", "fetched", "scheduled", device % 2 == 0 ? "alert" : "banner", "opened",
                                ], "device \(device): \(events)")
                        }
                        // Odd devices are Android phones, in the background (mixed app state): their own
                        // notification in the shade; even ones iPhones in the foreground: the in-app alert.
                        let android = log.all.filter { $0.device % 2 == 1 && ($0.event == "banner") }
                        #expect(
                            android.count == 2 && android.allSatisfy { $0.detail?.hasPrefix("notification in the shade") == true },
                            "\(android)")
                        let iOS = log.all.filter { $0.device % 2 == 0 && $0.event == "alert" }
                        #expect(iOS.count == 2 && iOS.allSatisfy { $0.detail?.hasPrefix("in-app alert") == true }, "\(iOS)")
                    }
                }
            }
        }
    }

    /// An Android phone reads the FCM message's `data`: an APNs payload on its channel (a
    /// notification rendered for the wrong platform) is a failure, not a push it shows.
    @Test func anAndroidPhoneRefusesAnAPNsPayload() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(devices: 1, platforms: .fcm)
                try await withSimulator(simulator) { log in
                    let handle = simulator.configuration.handle(of: 0)
                    #expect(PushHandle.problem(with: handle, platform: .fcm) == nil, "an FCM-shaped token: \(handle)")
                    let apns = OutgoingPush(
                        notification: 1,
                        installation: Installation(id: "x", platform: .fcm, handle: handle, tags: [], owner: "alice", updatedAt: 0),
                        rendered: try PushRenderer().render(
                            RichNotification(
                                id: 1, message: "hi", richType: .text, contentType: "text/plain",
                                payloadHash: "h", payloadSize: 2, creator: "alice",
                                target: "username:alice", createdAt: 0), collapseID: "1"))
                    _ = try await SimulatedHubAdapter(redis: pipeline.redis, prefix: pipeline.prefix).send([apns])
                    try await waitUntil(timeout: .seconds(60), "the device to report the push") { log.count("failed") == 1 }
                    #expect(log.all.first { $0.event == "failed" }?.detail?.contains("not an FCM data message") == true)
                    #expect(log.count("received") == 0)
                }
            }
        }
    }
}
