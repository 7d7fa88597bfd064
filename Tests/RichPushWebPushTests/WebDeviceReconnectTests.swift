import Foundation
import Logging
import RedisTestSupport
import Synchronization
import Testing

@testable import RichPushSimulator

/// A simulated web device keeps its push service connection: when the service drops it (here a
/// newer connection to the same subscription replaces it, as webpush-sim does), the device
/// connects again after its back-off, takes the subscription back, and gets the messages sent
/// meanwhile and after. When the service ends the subscription, the device subscribes again with
/// new keys and hands the new subscription over to be registered (`pushsubscriptionchange`).
@Suite("Web device reconnects", .serialized)
struct WebDeviceReconnectTests {
    /// A webpush-sim and a fleet of one web device subscribed at it.
    static func withOneDevice(_ body: (WebPushSimHarness, WebDeviceFleet, WebDevice) async throws -> Void) async throws {
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
            try await body(sim, fleet, try #require(devices.withLock { $0.first }))
        }
    }

    @Test func aDroppedConnectionIsMadeAgainAndNothingIsMissed() async throws {
        try await Self.withOneDevice { sim, fleet, device in
            let subscription = WebPushSimHarness.Subscription(
                endpoint: device.endpoint, id: device.subscriptionId, webSocket: device.webSocket.absoluteString)
            let received = Mutex<[String]>([])
            let running = Task {
                await fleet.run(
                    WebDeviceFleet.Handlers(
                        message: { _, message in received.withLock { $0.append(message.id) } },
                        resubscribed: { _, _ in Issue.record("the subscription was not ended") }))
            }
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

    @Test func anEndedSubscriptionIsReplacedByANewOneWithNewKeys() async throws {
        try await Self.withOneDevice { sim, fleet, first in
            let received = Mutex<[String: [String]]>([:])
            let changes = Mutex<[(old: WebDevice, new: WebDevice)]>([])
            // The first registration of the new subscription fails (the API is down, say): the
            // device tries again, and nothing is lost meanwhile.
            let refusals = Mutex(1)
            let running = Task {
                await fleet.run(
                    WebDeviceFleet.Handlers(
                        message: { device, message in
                            received.withLock { $0[device.endpoint, default: []].append(message.id) }
                        },
                        resubscribed: { old, new in
                            if refusals.withLock({ count in
                                defer { count -= 1 }; return count > 0
                            }) {
                                throw SimulatorError("the API is not reachable")
                            }
                            changes.withLock { $0.append((old, new)) }
                        }))
            }
            let sender = TestSender()
            let old = WebPushSimHarness.Subscription(
                endpoint: first.endpoint, id: first.subscriptionId, webSocket: first.webSocket.absoluteString)
            #expect(try await sim.push(old, sender: sender).status == 201)
            try await waitUntil(timeout: .seconds(60), "the first message") { received.withLock { $0[first.endpoint]?.count } == 1 }
            // The push service ends the subscription while the device is connected.
            #expect(try await sim.send(.DELETE, "https://127.0.0.1:\(sim.port)/subscription/\(first.subscriptionId)").status == 204)
            try await waitUntil(timeout: .seconds(60), "a new subscription registered") { !changes.withLock { $0.isEmpty } }
            let (replaced, fresh) = try #require(changes.withLock { $0.first })
            #expect(replaced.endpoint == first.endpoint)
            #expect(fresh.endpoint != first.endpoint && fresh.subscriptionId != first.subscriptionId)
            #expect(fresh.publicKey != first.publicKey && fresh.auth != first.auth, "a new subscription has new keys")
            #expect(refusals.withLock { $0 } < 0, "the failed registration was tried again")
            // The old endpoint is gone; the new one delivers (once the device is connected to it,
            // the service keeps what comes before).
            let gone = try await sim.push(old, sender: sender)
            #expect(gone.status == 410, "\(gone.json)")
            let new = WebPushSimHarness.Subscription(
                endpoint: fresh.endpoint, id: fresh.subscriptionId, webSocket: fresh.webSocket.absoluteString)
            #expect(try await sim.push(new, sender: sender).status == 201)
            try await waitUntil(timeout: .seconds(60), "the message to the new subscription") {
                received.withLock { $0[fresh.endpoint]?.count } == 1
            }
            await fleet.stop()
            await running.value
            #expect(changes.withLock { $0.count } == 1)
        }
    }
}
