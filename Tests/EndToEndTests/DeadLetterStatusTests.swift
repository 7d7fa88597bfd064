import Foundation
import Hiredis
import Logging
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// The status never lies: a notification whose job is dead-lettered says failed, with the reason,
/// for the devices it did not reach, and `richpush dlq replay` brings them back to queued.
@Suite("Dead-lettered notifications")
struct DeadLetterStatusTests {
    /// Issue 30's test: pushes that keep failing retryably exhaust the job's attempts (3 here):
    /// the status says failed with the reason for both devices and a `failed` webhook event
    /// arrives for each; replayed (the real CLI), they are queued again, and a healthy adapter
    /// sends them.
    @Test func aDeadLetteredNotificationSaysFailedAndItsReplaySendsIt() async throws {
        try await withRedisServer { server in
            // Attempts are counted exactly: a stall of a busy machine must not have the job reclaimed.
            try await Pipeline.start(server: server, visibilityTimeout: .seconds(30)) { pipeline in
                let receiver = WebhookReceiver(secret: WebhookFlowTests.secret)
                let bound = Atomic<Int>(0)
                try await receiver.serve(onPort: { bound.store($0, ordering: .relaxed) }) {
                    try await waitUntil(timeout: .seconds(60), "the receiver") { bound.load(ordering: .relaxed) != 0 }
                    _ = try await WebhookFlowTests.createWebhook(
                        pipeline, port: bound.load(ordering: .relaxed), events: ["sent", "failed"])
                    var devices: [String] = []
                    for index in 0..<2 {
                        devices.append(try await WebhookFlowTests.register(pipeline, handle: "\(pipeline.prefix)-dl\(index)"))
                    }
                    let adapter = SwitchedPushAdapter()
                    try await WebhookFlowTests.withDispatcher(pipeline) {
                        let id = try await pipeline.send(json: ["message": "doomed", "richType": "text", "payload": "p"])
                        try await withWorker(pipeline.worker(adapter: adapter)) {
                            try await waitUntil(timeout: .seconds(60), "the dead letter") {
                                try await pipeline.queue.deadLetterCount() == 1
                            }
                        }
                        #expect(adapter.attempts == 3 * devices.count)
                        let failed = try await pipeline.status(id)
                        #expect(failed["state"] as? String == "failed")
                        #expect((failed["counts"] as? [String: Int])?["failed"] == devices.count)
                        let entries = failed["devices"] as? [[String: Any]] ?? []
                        #expect(entries.compactMap { $0["installation"] as? String }.sorted() == devices.sorted())
                        for entry in entries {
                            let error = entry["error"] as? String ?? ""
                            #expect(entry["state"] as? String == "failed")
                            #expect(error.contains("gave up after 3 attempts") && error.contains("platform down"), "\(error)")
                        }
                        try await waitUntil(timeout: .seconds(30), "a failed event per device") {
                            Self.events(receiver, "failed", id).count == devices.count
                        }
                        #expect(Set(Self.events(receiver, "failed", id).compactMap { $0["installation"] }) == Set(devices))
                        #expect(
                            Self.events(receiver, "failed", id).allSatisfy { $0["error"]?.contains("gave up after 3 attempts") == true })

                        // Replayed while no worker runs: the devices are queued again at once.
                        let letter = try #require(try await pipeline.queue.deadLetters().first)
                        let replay = try await runTool(
                            try richpushExecutable().path,
                            ["dlq", "replay", letter.id, "--redis-url", server.url, "--queue-prefix", pipeline.prefix])
                        #expect(replay.status == 0, "\(replay.output)")
                        let queued = try await pipeline.status(id)
                        #expect(queued["state"] as? String == "queued")
                        #expect((queued["counts"] as? [String: Int])?["failed"] == 0)
                        #expect(
                            (queued["devices"] as? [[String: Any]] ?? []).allSatisfy {
                                $0["state"] as? String == "queued" && $0["error"] == nil
                            })
                        #expect(try await pipeline.queue.deadLetterCount() == 0)

                        // The adapter healthy again, the replayed job sends to both.
                        adapter.healthy.store(true, ordering: .relaxed)
                        try await withWorker(pipeline.worker(adapter: adapter)) {
                            try await waitUntil(timeout: .seconds(30), "both pushes sent") {
                                (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == devices.count
                            }
                        }
                        let sent = try await pipeline.status(id)
                        #expect(sent["state"] as? String == "sent")
                        #expect((sent["counts"] as? [String: Int])?["failed"] == 0)
                        #expect((sent["devices"] as? [[String: Any]] ?? []).allSatisfy { $0["state"] as? String == "sent" })
                        try await waitUntil(timeout: .seconds(30), "a sent event per device") {
                            Self.events(receiver, "sent", id).count == devices.count
                        }
                        #expect(Self.events(receiver, "failed", id).count == devices.count, "no failure reported twice")
                    }
                }
            }
        }
    }

    /// The distinct events of `type` about notification `id` that reached the receiver.
    static func events(_ receiver: WebhookReceiver, _ type: String, _ id: Int) -> [[String: String]] {
        receiver.uniqueEvents.values.filter { $0["type"] == type && $0["notificationId"] == "\(id)" }
    }
}

/// An adapter whose pushes fail retryably ("platform down") until it is switched healthy.
final class SwitchedPushAdapter: PushAdapter {
    let name = "switched"
    let healthy = Atomic<Bool>(false)
    private let tried = Atomic<Int>(0)

    /// Pushes handed to it while it was failing.
    var attempts: Int { tried.load(ordering: .relaxed) }

    func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard healthy.load(ordering: .relaxed) else {
            tried.add(pushes.count, ordering: .relaxed)
            return pushes.map { _ in .failed(reason: "platform down", retryable: true) }
        }
        return pushes.map { .sent(adapterID: "ok-\($0.installation.id)") }
    }
}

extension Pipeline {
    /// An in-process worker whose rich pushes go through `adapter`, on this pipeline's queue.
    func worker(adapter: any PushAdapter) -> JobWorker {
        var logger = Logger(label: "e2e.worker")
        logger.logLevel = .error
        let handler = RichPushJobHandler(
            ledger: RedisDeliveryLedger(redis: redis, keys: keys, retention: .seconds(3600)),
            installations: RedisInstallationStore(redis: redis, keys: keys), queue: queue, adapter: adapter, renderer: PushRenderer(),
            logger: logger)
        var handlers = JobHandlers()
        handler.register(in: &handlers)
        return JobWorker(
            queue: queue, handlers: handlers, redis: node,
            configuration: JobWorkerConfiguration(
                consumer: "w-\(UUID().uuidString.prefix(6))", concurrency: 8, blockTime: .milliseconds(100),
                drainTimeout: .seconds(2), maintenanceInterval: .milliseconds(50)),
            logger: logger)
    }
}
