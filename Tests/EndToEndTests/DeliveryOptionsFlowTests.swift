import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Testing

/// The sender's ttl and collapse id through a worker to the simulated hub: an offline device's
/// push is held no longer than its ttl, under the sender's collapse id.
@Suite("Delivery options through the hub")
struct DeliveryOptionsFlowTests {
    @Test func anOfflineDevicesPushIsHeldForItsTTLUnderItsCollapseID() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                // Registered, then offline: nothing listens on its channel.
                try await simulator.start()
                await simulator.stop()
                let handle = simulator.configuration.handle(of: 0)
                try await withWorker(pipeline.worker()) {
                    let id = try await pipeline.send(json: [
                        "message": "m", "richType": "text", "payload": "p", "ttl": 30, "collapseId": "score",
                    ])
                    try await waitUntil(timeout: .seconds(60), "the push to be held") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                    }
                    let hold = OfflineStore(prefix: pipeline.prefix)
                    let expires = try #require(
                        try await pipeline.redis.send("ZSCORE", hold.expiryKey(handle), "\(handle)\nscore").string.flatMap(Double.init))
                    let left = Int64(expires) - JobQueue.nowMilliseconds()
                    #expect((1...30_000).contains(left), "held for \(left) ms; the ttl is 30 s, the worker would hold for 60 s")
                    let envelope = try #require(try await pipeline.redis.send("HGET", hold.key(handle), "score").string)
                    #expect(envelope.contains(#""id":"score:"#), "\(envelope)")
                }
            }
        }
    }

    /// An offline iPhone is kept one push, as APNs keeps one per app ("APNs stores only one
    /// notification per bundle ID"): the newest, whatever the collapse ids; the ones it replaced
    /// expire at once (the sweeper reports them). The phone back online gets that one.
    @Test func anOfflineIPhoneIsKeptOnlyItsNewestPush() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none, handlePrefix: "collapse")
                try await simulator.start()
                await simulator.stop()
                let hold = OfflineStore(prefix: pipeline.prefix)
                let handle = simulator.configuration.handle(of: 0)
                var ids: [Int] = []
                try await withWorker(pipeline.worker()) {
                    for (message, collapse) in [("1-0", "score"), ("2-1", "score"), ("news", nil)] as [(String, String?)] {
                        var json: [String: Any] = ["message": message, "richType": "text", "payload": "p"]
                        if let collapse { json["collapseId"] = collapse }
                        let id = try await pipeline.send(json: json)
                        ids.append(id)
                        try await waitUntil(timeout: .seconds(60), "push \(id) to be held") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                        }
                        let live =
                            try await pipeline.redis.send(
                                "ZRANGEBYSCORE", hold.expiryKey(handle), "(\(JobQueue.nowMilliseconds())", "+inf"
                            ).array?.compactMap(\.string) ?? []
                        #expect(live == ["\(handle)\n\(collapse ?? String(id))"], "after \(message): \(live)")
                    }
                }
                // The two replaced pushes are due to expire now: the sweeper's set has them at or before now.
                let due = try await pipeline.redis.send("ZRANGEBYSCORE", hold.expiryKey(handle), "-inf", "\(JobQueue.nowMilliseconds())")
                #expect((due.array?.count ?? 0) == 1, "\(due)")
                let again = try pipeline.simulator(tap: .none, handlePrefix: "collapse")
                try await withSimulator(again) { log in
                    try await waitUntil(timeout: .seconds(60), "the held push") { log.count("received") == 1 }
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(log.all.filter { $0.event == "received" }.compactMap(\.richId) == [String(ids[2])])
                }
            }
        }
    }

    /// A held push whose ttl runs out is not handed to the device when it is back; the sweeper
    /// counts it `expired` in the status, marks the device, and a webhook that wants `expired` gets it.
    @Test func anExpiredHeldPushIsCountedAndNeverDelivered() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let hook = try await pipeline.call("POST", "api/webhooks", json: ["url": "http://127.0.0.1:9/hook", "events": ["expired"]])
                #expect(hook.status == 201)
                let simulator = try pipeline.simulator(tap: .none, handlePrefix: "expiring")
                try await simulator.start()
                await simulator.stop()
                let id = try await withWorker(pipeline.worker()) {
                    let id = try await pipeline.send(json: ["message": "soon stale", "richType": "text", "payload": "p", "ttl": 1])
                    try await waitUntil(timeout: .seconds(60), "the push to be held") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                    }
                    return id
                }
                let sweeper = HubExpirySweeper(
                    redis: pipeline.redis, prefix: pipeline.prefix,
                    ledger: RedisDeliveryLedger(redis: pipeline.redis, keys: pipeline.keys, retention: .seconds(3600)))
                // Not yet due: nothing expires (a minute early: a busy machine stalls for seconds).
                #expect(try await sweeper.sweep(now: JobQueue.nowMilliseconds() - 60_000) == 0)
                try await Task.sleep(for: .milliseconds(1200))
                #expect(try await sweeper.sweep() == 1)
                #expect(try await sweeper.sweep() == 0)
                let status = try await pipeline.status(id)
                #expect((status["counts"] as? [String: Int])?["expired"] == 1)
                #expect((status["devices"] as? [[String: Any]])?.first?["state"] as? String == "expired")
                let entries = try await pipeline.redis.send("XRANGE", pipeline.keys.webhookOutbox, "-", "+").array ?? []
                let fields = entries.first?.array?.last?.array?.compactMap(\.string) ?? []
                #expect(entries.count == 1 && fields.contains("expired"))
                // Back online: nothing is handed over.
                let again = try pipeline.simulator(tap: .none, handlePrefix: "expiring")
                try await withSimulator(again) { log in
                    try await Task.sleep(for: .milliseconds(800))
                    #expect(log.count("received") == 0)
                }
            }
        }
    }
}
