import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import RichPushWorker
import Testing

/// A push held for an offline device lives until its notification's creation plus its ttl, to
/// the millisecond: a phone back 0.3 s before that gets it, one back 0.3 s after does not, and
/// the status counts it expired. (Rounded down to whole seconds twice, a push created half-way
/// through a second with ttl 3 expired after 1.9 s.)
///
/// Timed from the record's `createdAt` as the store returns it, and judged on when the phone
/// really took its pushes (after the moment it was let go, before a marker push that reaches it
/// only once the take is over): on a slow machine a round can be inconclusive, and it is run
/// again; it never passes on a guess.
@Suite("A held push's ttl, to the millisecond")
struct HeldTTLTests {
    /// What a phone's return found.
    struct Return {
        let installation: String
        let delivered: Bool
        /// The take happened within `from...to` (ms since 1970).
        let from: Int64
        let to: Int64
    }

    /// Brings back the phone `name` at `at` (ms since 1970): registered and subscribed first, it
    /// takes what the hub held for it once let go at `at`. Says whether push `id` was among it.
    static func comeBack(_ pipeline: Pipeline, name: String, at: Int64, push id: Int) async throws -> Return {
        let phone = try pipeline.simulator(tap: .none, handlePrefix: name, fetchPayload: false)
        let handle = phone.configuration.handle(of: 0)
        let log = EventLog()
        try await phone.start()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await event in phone.events { log.append(event) } }
            do {
                try await waitUntil(timeout: .seconds(60), "phone \(name) to register") { log.count("registered") == 1 }
                let installation = try #require(log.all.first { $0.event == "registered" }?.installation)
                let wait = at - JobQueue.nowMilliseconds()
                if wait > 0 { try await Task.sleep(for: .milliseconds(wait)) }
                let from = JobQueue.nowMilliseconds()
                // run() takes the held pushes before it reads the phone's channel.
                group.addTask { try await phone.run() }
                // A live push on the channel: the phone handles it only after the take.
                let marker = RichNotification(
                    id: 990_000_000 + id, message: "marker", richType: .text, contentType: "text/plain", payloadHash: "h",
                    payloadSize: 1, creator: "alice", target: "username:alice", createdAt: JobQueue.nowMilliseconds())
                _ = try await SimulatedHubAdapter(redis: pipeline.redis, prefix: pipeline.prefix).send([
                    OutgoingPush(
                        notification: marker.id,
                        installation: Installation(
                            id: installation, platform: .apns, handle: handle, tags: [], owner: "alice", updatedAt: 0),
                        rendered: try PushRenderer().render(marker, collapseID: "marker"))
                ])
                try await waitUntil(timeout: .seconds(60), "the marker on phone \(name)") {
                    log.all.contains { $0.richId == String(marker.id) }
                }
                let to = JobQueue.nowMilliseconds()
                // Taken (the phone has it), or left in the hold for the sweeper.
                let delivered =
                    try await pipeline.redis.send("HEXISTS", OfflineStore(prefix: pipeline.prefix).key(handle), String(id)).int == 0
                if delivered {
                    try await waitUntil(timeout: .seconds(60), "push \(id) on phone \(name)") {
                        log.all.contains { $0.event == "received" && $0.richId == String(id) }
                    }
                }
                await phone.stop()
                try await group.waitForAll()
                return Return(installation: installation, delivered: delivered, from: from, to: to)
            } catch {
                await phone.stop()
                try? await group.waitForAll()
                throw error
            }
        }
    }

    /// ttl 2, 3 and 4 s, created at a given fraction of a second (0.5: where rounding down cost
    /// the most; 0.15: where a hold rounded up to a whole second would outlive ttl + 0.3 s). Not
    /// ttl 1: the worker must hold both pushes and a phone come back within 0.7 s, which a busy
    /// machine missed three times in a row.
    @Test(arguments: [(ttl: 2, fraction: 0.5), (ttl: 3, fraction: 0.15), (ttl: 4, fraction: 0.85)])
    func aHeldPushReachesAPhoneBackBeforeItsTTLAndExpiresAfter(ttl: Int, fraction: Double) async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                // Two phones of alice: registered, then offline.
                for name in ["early", "late"] {
                    let phone = try pipeline.simulator(tap: .none, handlePrefix: name, fetchPayload: false)
                    try await phone.start()
                    await phone.stop()
                }
                let store = RedisNotificationStore(
                    redis: pipeline.redis, keys: pipeline.keys, queue: pipeline.queue, retention: .seconds(3600))
                let sweeper = HubExpirySweeper(redis: pipeline.redis, prefix: pipeline.prefix, ledger: store.ledger)
                var conclusive = false
                try await withWorker(pipeline.worker()) {
                    for attempt in 1...5 where !conclusive {
                        // Created at `fraction` of a second.
                        let now = JobQueue.nowMilliseconds()
                        try await Task.sleep(for: .milliseconds((now / 1000 + 1) * 1000 + Int64(fraction * 1000) - now))
                        let record = try await store.create(
                            NotificationDraft(
                                message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                                creator: "alice", target: "username:alice",
                                delivery: DeliveryOptions(ttl: .seconds(ttl)))
                        ) { _ in "h" }
                        let deadline = record.createdAt + Int64(ttl) * 1000
                        try await waitUntil(timeout: .seconds(60), "both pushes to be held") {
                            try await store.status(id: record.id)?.counts["held"] == 2
                        }
                        let early = try await Self.comeBack(pipeline, name: "early", at: deadline - 300, push: record.id)
                        let late = try await Self.comeBack(pipeline, name: "late", at: deadline + 300, push: record.id)
                        let context =
                            "attempt \(attempt): created at \(record.createdAt % 1000) ms into a second, ttl \(ttl) s; early took within "
                            + "\(early.from - record.createdAt)...\(early.to - record.createdAt) ms, late within \(late.from - record.createdAt)...\(late.to - record.createdAt) ms"
                        // Whatever the timing: never delivered once the deadline had passed, never
                        // expired before it.
                        for back in [early, late] {
                            if back.delivered {
                                #expect(back.from < deadline, "delivered after the deadline; \(context)")
                            } else {
                                #expect(back.to >= deadline, "expired before the deadline; \(context)")
                            }
                        }
                        #expect(late.from >= deadline && !late.delivered, "\(context)")
                        // What was not delivered is reported expired.
                        #expect(try await sweeper.sweep() == [early, late].filter { !$0.delivered }.count, "\(context)")
                        // Back before the deadline for the whole take (else the machine was too slow
                        // to tell: once more): delivered.
                        guard early.to < deadline else { continue }
                        conclusive = true
                        #expect(early.delivered, "\(context)")
                        let status = try #require(try await store.status(id: record.id))
                        #expect(status.counts["expired"] == 1, "\(status.counts)")
                        #expect(status.devices.first { $0.installation == late.installation }?.state == "expired", "\(status.devices)")
                        #expect(status.devices.first { $0.installation == early.installation }?.state != "expired", "\(status.devices)")
                    }
                }
                #expect(conclusive, "the machine was too slow to bring a phone back within 0.3 s of its deadline, five times")
            }
        }
    }
}
