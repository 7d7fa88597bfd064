import AsyncHTTPClient
import Foundation
import Hiredis
import Logging
import RedisTestSupport
import RichPushCore
import RichPushStorage
import RichPushWebhooks
import RichPushWorker
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Status webhooks end to end: the API, a worker, a device and the worker's dispatcher POSTing to
/// a real receiver over loopback HTTP.
@Suite("Status webhooks")
struct WebhookFlowTests {
    static let secret = "whsec_test-secret-0123456789"

    /// Runs the webhook dispatchers of a worker process built by its composition root, retrying
    /// fast, while `body` runs.
    static func withDispatcher(_ pipeline: Pipeline, retryWindow: Duration = .seconds(3600), _ body: () async throws -> Void) async throws {
        let webhooks = WebhookDispatcherConfiguration(
            consumer: "d-\(UUID().uuidString.prefix(6))", timeout: .seconds(10),
            retryBase: .milliseconds(300), retryMax: .seconds(2), retryWindow: retryWindow,
            registryRefresh: .milliseconds(200), retryPoll: .milliseconds(50))
        // Its warnings (a failed outbox read or retry pass) in the test's log: they say why a
        // delivery was not attempted.
        let process = pipeline.process(process: WorkerProcess.Configuration(webhooks: webhooks), logger: "e2e.webhooks", logLevel: .warning)
        try await withServices(process.webhooks, body)
    }

    static func createWebhook(
        _ pipeline: Pipeline, port: Int, events: [String] = WebhookEventType.allCases.map(\.rawValue), as user: String = "alice",
        extra: [String: Any] = [:]
    ) async throws -> String {
        let answer = try await pipeline.call(
            "POST", "api/webhooks", as: user,
            json: ["url": "http://127.0.0.1:\(port)/hook", "events": events, "secret": secret].merging(extra) { _, new in new })
        #expect(answer.status == 201, "\(answer.json)")
        return try #require(answer.json["id"] as? String)
    }

    /// A loopback port held by a socket that is bound but does not listen: a connection to it is
    /// refused, as to a receiver that is down, and no other test can take the port meanwhile.
    /// Returns the port and the socket, to close just before the receiver listens there.
    static func downPort() throws -> (port: Int, socket: Int32) {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var bound = address
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok =
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } } == 0
            && withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
            } == 0
        guard ok else {
            close(socket)
            throw RedisServerError("no free port")
        }
        return (Int(UInt16(bigEndian: bound.sin_port)), socket)
    }

    /// Registers a device for alice with the seed's two calls; returns its registration id.
    static func register(_ pipeline: Pipeline, handle: String) async throws -> String {
        var request = URLRequest(url: pipeline.baseURL.appendingPathComponent("api/register"))
        request.httpMethod = "POST"
        request.setValue("Basic " + Data("alice:alice-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let id = try #require(try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) as? String)
        let saved = try await pipeline.call("PUT", "api/register/\(id)", json: ["Platform": "apns", "Handle": handle, "Tags": []])
        #expect(saved.status == 200 || saved.status == 204, "\(saved.json)")
        return id
    }

    /// Events per "<notification>/<type>" that the status counts say happened.
    static func expectedEvents(_ pipeline: Pipeline, ids: [Int]) async throws -> [String: Int] {
        var expected: [String: Int] = [:]
        for id in ids {
            let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
            expected["\(id)/sent"] = (counts["sent"] ?? 0) + (counts["held"] ?? 0)
            for type in ["fetched", "displayed", "opened"] { expected["\(id)/\(type)"] = counts[type] ?? 0 }
        }
        return expected.filter { $0.value > 0 }
    }

    /// Distinct events per "<notification>/<type>" that reached the receiver.
    static func seen(_ receiver: WebhookReceiver) -> [String: Int] {
        var seen: [String: Int] = [:]
        for event in receiver.uniqueEvents.values { seen["\(event["notificationId"] ?? "")/\(event["type"] ?? "")", default: 0] += 1 }
        return seen
    }

    /// The issue's test: a receiver that is down (nothing listens) for 20 s, then up, gets every
    /// event of the notifications sent meanwhile at least once, each correctly signed; the
    /// attempts route shows the failed attempts and the deliveries that followed.
    @Test func aReceiverDownFor20SecondsGetsEveryEventOnceUp() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let (port, held) = try Self.downPort()
                let webhook = try await Self.createWebhook(pipeline, port: port)
                let receiver = WebhookReceiver(secret: Self.secret)
                let simulator = try pipeline.simulator(devices: 2, appState: .background, tap: .more)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        try await Self.withDispatcher(pipeline) {
                            let downSince = ContinuousClock.now
                            var ids: [Int] = []
                            for index in 0..<3 {
                                ids.append(try await pipeline.send(json: ["message": "hook \(index)", "richType": "text", "payload": "p"]))
                            }
                            try await waitUntil(timeout: .seconds(30), "every device to open every notification") {
                                log.count("opened") >= 6
                            }
                            // The receiver stays down for 20 s from the first send.
                            try await Task.sleep(until: downSince + .seconds(20))
                            let failed = try await pipeline.call("GET", "api/webhooks/\(webhook)/attempts")
                            let early = failed.json["attempts"] as? [[String: Any]] ?? []
                            #expect(!early.isEmpty && early.allSatisfy { $0["outcome"] as? String == "retrying" && $0["status"] == nil })
                            close(held)
                            try await receiver.serve(port: port) {
                                // What the status route counted, the receiver must have: one event per count.
                                let expected = try await Self.expectedEvents(pipeline, ids: ids)
                                #expect(expected.values.reduce(0, +) >= 3 * 2 * 3)
                                try await waitUntil(timeout: .seconds(30), "every event at the receiver") {
                                    Self.seen(receiver) == expected
                                }
                                // Every delivery ended (while the receiver is up): nothing waits for a retry.
                                try await waitUntil(timeout: .seconds(30), "the retries to drain") {
                                    try await pipeline.redis.send("ZCARD", "\(pipeline.prefix):{webhooks}:retries").int == 0
                                }
                            }
                            #expect(receiver.deliveries.filter { !$0.signatureValid }.isEmpty)
                            for event in receiver.uniqueEvents.values {
                                #expect(event["user"] == "alice" && event["installation"] != nil && event["at"]?.hasSuffix("Z") == true)
                            }
                            let attempts =
                                try await pipeline.call("GET", "api/webhooks/\(webhook)/attempts").json["attempts"] as? [[String: Any]]
                                ?? []
                            #expect(attempts.contains { $0["outcome"] as? String == "delivered" && $0["status"] as? Int == 204 })
                            let outbox = try await pipeline.redis.send("XLEN", pipeline.keys.webhookOutbox).int
                            #expect(outbox == 0)
                        }
                    }
                }
            }
        }
    }

    /// A receiver that always answers 500 ends, after the retry window, in the webhook's dead
    /// letters (with the body, readable through the API); a replay once it is fixed delivers them.
    @Test func aReceiverThatAlwaysFailsEndsInTheDeadLetters() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let receiver = WebhookReceiver(secret: Self.secret)
                receiver.failing.store(true, ordering: .relaxed)
                let bound = Atomic<Int>(0)
                try await receiver.serve(onPort: { bound.store($0, ordering: .relaxed) }) {
                    try await waitUntil(timeout: .seconds(60), "the receiver") { bound.load(ordering: .relaxed) != 0 }
                    let webhook = try await Self.createWebhook(pipeline, port: bound.load(ordering: .relaxed), events: ["sent"])
                    try await withWorker(pipeline.worker()) {
                        try await Self.withDispatcher(pipeline, retryWindow: .seconds(2)) {
                            // No device is online: the hub holds the push, which is a `sent` event (held).
                            let registration = try await Self.register(pipeline, handle: "\(pipeline.prefix)-offline")
                            _ = try await pipeline.send(json: ["message": "dead", "richType": "text", "payload": "p"])
                            _ = registration
                            try await waitUntil(timeout: .seconds(30), "a dead letter") {
                                let letters =
                                    try await pipeline.call("GET", "api/webhooks/\(webhook)/dead-letters").json["deadLetters"]
                                    as? [[String: Any]] ?? []
                                return !letters.isEmpty
                            }
                            let attempts =
                                try await pipeline.call("GET", "api/webhooks/\(webhook)/attempts").json["attempts"] as? [[String: Any]]
                                ?? []
                            #expect(attempts.first?["outcome"] as? String == "dead" && attempts.first?["status"] as? Int == 500)
                            #expect(attempts.count >= 2 && attempts.dropFirst().allSatisfy { $0["outcome"] as? String == "retrying" })
                            #expect(receiver.deliveries.isEmpty)
                            // Fixed, then replayed: delivered, and the dead letters are empty.
                            receiver.failing.store(false, ordering: .relaxed)
                            let replay = try await pipeline.call("POST", "api/webhooks/\(webhook)/dead-letters/replay")
                            #expect(replay.status == 202 && replay.json["replayed"] as? Int == 1)
                            try await waitUntil(timeout: .seconds(30), "the replayed delivery, recorded as delivered") {
                                let attempts =
                                    try await pipeline.call("GET", "api/webhooks/\(webhook)/attempts").json["attempts"] as? [[String: Any]]
                                    ?? []
                                return !receiver.deliveries.isEmpty && attempts.first?["outcome"] as? String == "delivered"
                            }
                            let letters =
                                try await pipeline.call("GET", "api/webhooks/\(webhook)/dead-letters").json["deadLetters"]
                                as? [[String: Any]] ?? []
                            #expect(letters.isEmpty)
                            #expect(receiver.deliveries.filter { !$0.signatureValid }.isEmpty)
                        }
                    }
                }
            }
        }
    }
}
