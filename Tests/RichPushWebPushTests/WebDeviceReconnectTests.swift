import Foundation
import Logging
import RedisTestSupport
@testable import RichPushSimulator
import Synchronization
import Testing

/// A simulated web device keeps its push service connection: when the service drops it (here a
/// newer connection to the same subscription replaces it, as webpush-sim does), the device
/// connects again after its back-off, takes the subscription back, and gets the messages sent
/// meanwhile and after.
@Suite("Web device reconnects", .serialized)
struct WebDeviceReconnectTests {
    @Test func aDroppedConnectionIsMadeAgainAndNothingIsMissed() async throws {
        try await WebPushSimHarness.with { sim in
            let ca = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-ca-\(UUID().uuidString).pem")
            try Data(sim.caPEM.utf8).write(to: ca)
            defer { try? FileManager.default.removeItem(at: ca) }
            let service = SimulatorConfiguration.WebPushService(url: try #require(URL(string: "https://127.0.0.1:\(sim.port)")), caFile: ca)
            var logger = Logger(label: "test.web-device")
            logger.logLevel = .error
            let fleet = try WebDeviceFleet(service: service, logger: logger)
            let devices = Mutex<[WebDevice]>([])
            try await fleet.subscribe([0]) { device in devices.withLock { $0.append(device) } }
            let device = try #require(devices.withLock { $0.first })
            let subscription = WebPushSimHarness.Subscription(endpoint: device.endpoint, id: device.subscriptionId, webSocket: device.webSocket.absoluteString)
            let received = Mutex<[String]>([])
            let running = Task { await fleet.run { _, message in received.withLock { $0.append(message.id) } } }
            let sender = TestSender()
            // Connected: a first message arrives.
            #expect(try await sim.push(subscription, sender: sender).status == 201)
            try await waitUntil(timeout: .seconds(60), "the first message") { received.withLock { $0.count } == 1 }
            // Another connection to the subscription replaces the device's; the device connects
            // again after 0.1 s and replaces that one in turn.
            let thief = try await sim.connect(subscription)
            try await waitUntil(timeout: .seconds(60), "the device to take its subscription back") { thief.isClosed }
            // Sent after the drop: kept by the service if the device is between connections, and
            // delivered once it is back.
            for _ in 0..<3 { #expect(try await sim.push(subscription, sender: sender).status == 201) }
            try await waitUntil(timeout: .seconds(60), "the three messages after the drop") { received.withLock { $0.count } == 4 }
            #expect(Set(received.withLock { $0 }).count == 4)
            await fleet.stop()
            await running.value
        }
    }
}
