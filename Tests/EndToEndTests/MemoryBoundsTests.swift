import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import Testing

/// docs/redis-keys.md, checked: after notifications went all the way (created, pushed, fetched,
/// displayed), every key RichPush wrote either belongs to the documented durable set (users,
/// installations, the queue) or expires within the retention; none grows by a key per push.
@Suite("Memory bounds")
struct MemoryBoundsTests {
    static let perNotification = ["notif", "status", "devices", "fetched", "receipts", "ledger"]
    static let durable = [
        "user", "users", "inst", "installations", "tag", "handle", "owned", "usertags", "seq", "schema",
        "jobs", "counters", "delayed", "dead", "apikey", "apikeys", "auth",
    ]
    /// Fair scheduling's keys of a partition (docs/redis-keys.md, the queue): no TTL, for they
    /// hold the queue's own state, and none grows by a key per push. What bounds each:
    static let scheduling = [
        "sched":
            "a hash of the scheduler's numbers (V, waiting, tickets) and at most nine fields per app (weight, cap, in flight, pass, done, taken, retried, dead-lettered, paused): bounded by the apps, like counters",
        "ready": "a sorted set of the apps with jobs waiting, one member each, removed when its lanes run dry (an empty set is no key)",
        "wait":
            "an app's lane (now, bulk): its jobs waiting for a worker's take, which the backlog counts and back-pressure bounds (an empty list is no key)",
        "bell": "tokens that wake idle workers, trimmed to 64",
    ]

    @Test func everyKeyOfANotificationExpiresWithinTheRetention() async throws {
        try await withRedisServer { server in
            // 300 sends back to back: past the default burst of 100, within a raised one (the
            // quota's own keys are among those checked).
            try await Pipeline.start(server: server, configure: { $0.quotas.notificationsBurst = 1_000 }) { pipeline in
                let simulator = try pipeline.simulator(devices: 2, tap: .ok, handlePrefix: "bounds")
                let count = 300
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        for index in 0..<count {
                            _ = try await pipeline.send(json: ["message": "m\(index)", "richType": "text", "payload": "p\(index % 10)"])
                        }
                        try await waitUntil(timeout: .seconds(60), "every push to be fetched and displayed") {
                            log.count("dismissed") == 2 * count
                        }
                    }
                }
                let retention = 7 * 86400  // the API's default in Pipeline
                var perPattern: [String: Int] = [:]
                var inLanes = 0
                var cursor = "0"
                repeat {
                    let reply = try await pipeline.redis.send("SCAN", cursor, "MATCH", "\(pipeline.prefix):*", "COUNT", 1000).array ?? []
                    cursor = reply.first?.string ?? "0"
                    for key in (reply.last?.array ?? []).compactMap(\.string) {
                        let kind = Self.kind(of: key, prefix: pipeline.prefix)
                        perPattern[kind, default: 0] += 1
                        let ttl = try await pipeline.redis.send("TTL", key).int ?? -2
                        if Self.durable.contains(kind) {
                            continue
                        }
                        if Self.scheduling[kind] != nil {
                            // No TTL: held to its bound instead (one app sent here, the default).
                            switch kind {
                            case "sched": #expect(try await pipeline.redis.send("HLEN", key).int ?? 0 <= 3 + 8, "\(key)")
                            case "ready": #expect(try await pipeline.redis.send("ZCARD", key).int ?? 0 <= 1, "\(key)")
                            case "wait": inLanes += try await pipeline.redis.send("LLEN", key).int ?? 0
                            default: #expect(try await pipeline.redis.send("LLEN", key).int ?? 0 <= 64, "\(key)")
                            }
                            continue
                        }
                        #expect(ttl > 0 && ttl <= retention, "key \(key) (\(kind)) has TTL \(ttl)")
                    }
                } while cursor != "0"
                // One key of each per-notification kind per notification, none per push or per device.
                for kind in Self.perNotification {
                    #expect(
                        perPattern[kind, default: 0] <= count, "\(kind): \(perPattern[kind, default: 0]) keys for \(count) notifications")
                }
                // The lanes hold the jobs the queue counts as waiting, no more.
                #expect(inLanes == (try await pipeline.queue.stats().waiting))
                // Every kind of key is documented (docs/redis-keys.md): a new kind must be added there.
                let known = Set(
                    Self.durable + Self.scheduling.keys + Self.perNotification + [
                        "payload", "created", "held", "held-expiry", "quota", "login",
                    ])
                #expect(Set(perPattern.keys).subtracting(known).isEmpty, "undocumented keys: \(perPattern)")
                #expect(perPattern["notif"] == count)
                // Payloads are shared by content: ten distinct ones.
                #expect(perPattern["payload"] == 10)
                #expect(perPattern["created"] == 1)
            }
        }
    }

    @Test func theCreatorsIndexDropsExpiredRecords() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                var ids: [Int] = []
                for index in 0..<3 {
                    ids.append(try await pipeline.send(json: ["message": "m\(index)", "richType": "text", "payload": "p"]))
                }
                let index = "\(pipeline.prefix):{q0}:created:alice"
                #expect(try await pipeline.redis.send("ZCARD", index).int == 3)
                // The two oldest records expire (as their TTL would make them).
                for id in ids.prefix(2) { try await pipeline.redis.send("DEL", pipeline.keys.notification(id)) }
                // One create in 8 (by id) trims the oldest entries whose records are gone; the
                // others pay nothing for it. Eight creates in a row meet one that trims.
                var live = [ids[2]]
                for index in 3..<11 {
                    live.append(try await pipeline.send(json: ["message": "m\(index)", "richType": "text", "payload": "p"]))
                }
                let left = (try await pipeline.redis.send("ZRANGE", index, 0, -1).array ?? []).compactMap(\.string).compactMap(Int.init)
                #expect(left == live.sorted(), "the index holds \(left), live are \(live)")
                #expect(try await pipeline.redis.send("TTL", index).int ?? 0 > 0)
            }
        }
    }

    /// The key's kind: the first segment after the prefix (and after the partition's hash tag).
    static func kind(of key: String, prefix: String) -> String {
        var parts = key.dropFirst(prefix.count + 1).split(separator: ":")
        if parts.first?.hasPrefix("{") == true { parts.removeFirst() }
        return parts.first.map(String.init) ?? key
    }
}
