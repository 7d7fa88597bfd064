import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RichPushWebhooks
import ServiceLifecycle
import Synchronization

/// A webhook receiver on a loopback port, as a user would write one: it checks each request's
/// signature with the webhook's secret and keeps what arrived. `failing` makes it answer 500.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let deliveryID: String
        let events: [[String: String]]
        let signatureValid: Bool
        let signature: String
        let timestamp: String
        let body: [UInt8]
    }

    let secret: String
    let failing = Atomic<Bool>(false)
    private let received = Mutex<[Delivery]>([])

    init(secret: String) {
        self.secret = secret
    }

    var deliveries: [Delivery] { received.withLock { $0 } }
    /// Every event received, once per event id (a retry may bring one again).
    var uniqueEvents: [String: [String: String]] {
        var events: [String: [String: String]] = [:]
        for delivery in deliveries { for event in delivery.events { events[event["id"] ?? ""] = event } }
        return events
    }

    /// Serves on `port` (0: any; `onPort` says which) while `body` runs.
    func serve(port: Int = 0, onPort: @escaping @Sendable (Int) -> Void = { _ in }, _ body: () async throws -> Void) async throws {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let bytes = Array(buffer: try await request.body.collect(upTo: 1 << 20))
            let signature = request.headers[HTTPField.Name("X-RichPush-Signature")!] ?? ""
            let timestamp = request.headers[HTTPField.Name("X-RichPush-Timestamp")!] ?? ""
            let valid = WebhookSignature.verify(header: signature, timestamp: timestamp, body: bytes, secret: self.secret)
            let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
            let events = (object["events"] as? [[String: Any]] ?? []).map { event in
                event.mapValues { "\($0)" }
            }
            if self.failing.load(ordering: .relaxed) { return Response(status: .internalServerError) }
            self.received.withLock {
                $0.append(
                    Delivery(
                        deliveryID: object["deliveryId"] as? String ?? "", events: events, signatureValid: valid,
                        signature: signature, timestamp: timestamp, body: bytes))
            }
            return Response(status: valid ? .noContent : .unauthorized)
        }
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in onPort(channel.localAddress?.port ?? 0) }, logger: logger)
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            do {
                try await body()
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }
}
