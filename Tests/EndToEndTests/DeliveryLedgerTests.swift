import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// The delivery ledger against a real Redis: leases, records, expiry and release.
@Suite("Delivery ledger")
struct DeliveryLedgerTests {
    /// A notification store on a private Redis, with its keys under a prefix of its own.
    /// A ledger value without the time its outcome was recorded (`"at":"<ms>",`), which the
    /// console's timeline reads; the rest compared as written.
    static func timeless(_ value: String?) -> String? {
        value?.replacing(/"at":"[0-9]+",/, with: "")
    }

    static func withStore(_ body: (RedisConnection, StorageKeys, RedisNotificationStore) async throws -> Void) async throws {
        try await withServerAndStore { _, redis, keys, store in try await body(redis, keys, store) }
    }

    /// The same, with the server (for a test that reads its command counts).
    static func withServerAndStore(
        _ body: (RedisServer, RedisConnection, StorageKeys, RedisNotificationStore) async throws -> Void
    ) async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("ledger").dropLast()))
            let store = RedisNotificationStore(
                redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                retention: .seconds(3600))
            do {
                try await body(server, redis, keys, store)
            } catch {
                await redis.close()
                throw error
            }
            await redis.close()
        }
    }

    /// Each push counts its own failed attempts in one hash per notification, in one round trip
    /// for many notifications; the counts expire with the notification, and a replay of a dead
    /// letter starts its pushes' counts over (a fan-out batch's installations, or a whole one).
    @Test func failedAttemptsAreCountedPerPushAndStartOverOnReplay() async throws {
        try await Self.withServerAndStore { server, redis, keys, store in
            try await redis.send("CONFIG", "RESETSTAT")
            #expect(try await store.ledger.countFailedAttempts([7: ["a", "b"], 8: ["a"]]) == [7: ["a": 1, "b": 1], 8: ["a": 1]])
            #expect(try await store.ledger.countFailedAttempts([7: ["b", "b"], 8: []]) == [7: ["b": 2]], "a push counts once per call")
            #expect(try await server.commandCalls("hincrby") == 4)
            #expect(try await redis.send("HGETALL", keys.attempts(7)).array?.compactMap(\.string) == ["a", "1", "b", "2"])
            #expect(try await redis.send("TTL", keys.attempts(7)).int ?? 0 > 3000, "it expires with the notification")
            try await store.ledger.reviveDeadLettered([DeliveryScope(notification: 7, installations: ["b"])])
            #expect(
                try await store.ledger.countFailedAttempts([7: ["a", "b"]]) == [7: ["a": 2, "b": 1]],
                "the replayed push starts over, the other does not")
            try await store.ledger.reviveDeadLettered([DeliveryScope(notification: 7)])
            #expect(try await redis.send("EXISTS", keys.attempts(7)).int == 0)
            #expect(try await redis.send("EXISTS", keys.attempts(8)).int == 1)
        }
    }

    @Test func leasesRecordsAndExpiry() async throws {
        try await Self.withStore { redis, keys, store in
            // Leases long enough that a stall of minutes on a busy machine cannot make them lapse.
            #expect(
                try await store.ledger.leaseDeliveries(id: 7, installations: ["a", "b"], owner: "w1", duration: .seconds(600)) == [
                    .leased, .leased,
                ])
            #expect(
                try await store.ledger.leaseDeliveries(id: 7, installations: ["c"], owner: "w1", duration: .milliseconds(300)) == [.leased])
            // Another owner waits for a live lease; the owner itself may lease again.
            let other = try await store.ledger.leaseDeliveries(id: 7, installations: ["a"], owner: "w2", duration: .seconds(1))
            guard case .leasedByOther(let remaining) = other[0] else { Issue.record("expected a live lease, got \(other)"); return }
            #expect(remaining > .seconds(300) && remaining <= .seconds(600))
            #expect(try await store.ledger.leaseDeliveries(id: 7, installations: ["a"], owner: "w1", duration: .seconds(30)) == [.leased])
            // a sent (recorded), b failed for retry (released), c never recorded (its worker died).
            try await store.ledger.recordDeliveries(
                id: 7,
                results: [
                    DeliveryResult(installation: "a", counter: .sent),
                    DeliveryResult(installation: "b", counter: .retried, error: "try later"),
                ])
            #expect(
                try await store.ledger.leaseDeliveries(id: 7, installations: ["a", "b"], owner: "w2", duration: .seconds(1)) == [
                    .recorded, .leased,
                ])
            try await store.ledger.releaseLeases([DeliveryKey(notification: 7, installation: "b")])
            try await Task.sleep(for: .milliseconds(400))
            #expect(
                try await store.ledger.leaseDeliveries(id: 7, installations: ["b", "c"], owner: "w3", duration: .seconds(1)) == [
                    .leased, .leased,
                ])
            // The ledger is one hash per notification that expires with it.
            #expect(try await redis.send("TTL", keys.ledger(7)).int ?? 0 > 0)
            #expect(try await store.ledger.forgetDeliveries(id: 7, installations: ["a"]) == 1)
            #expect(try await store.ledger.leaseDeliveries(id: 7, installations: ["a"], owner: "w4", duration: .seconds(1)) == [.leased])
        }
    }

    /// A lease given back (an unreachable adapter) or released by a retryable failure leaves its
    /// pair addressed: the push may have reached the device (its reply was lost), and the device's
    /// fetch of the payload must not be 404. The pair is free to lease again, and a ledger that
    /// expired meanwhile gets its expiry back.
    @Test func aReleasedPairStaysAddressedAndFree() async throws {
        try await Self.withStore { redis, keys, store in
            #expect(
                try await store.ledger.leaseDeliveries(id: 9, installations: ["a", "b"], owner: "w1", duration: .seconds(30)) == [
                    .leased, .leased,
                ])
            try await store.ledger.releaseLeases([DeliveryKey(notification: 9, installation: "a")])
            try await store.ledger.recordDeliveries(
                id: 9, results: [DeliveryResult(installation: "b", counter: .retried, error: "no answer")])
            // Given back bare; released by the failure with the device's entry.
            #expect(
                try await redis.send("HMGET", keys.ledger(9), "a", "b").array?.map { Self.timeless($0.string) } == [
                    "T", #"T{"error":"no answer","state":"retried"}"#,
                ])
            try await redis.send("HSET", keys.notification(9), "creator", "alice")  // the record the read check finds
            #expect(try await store.isReadable(id: 9, .installation("a")))
            #expect(try await store.isReadable(id: 9, .installation("b")))
            #expect(try await store.isReadable(id: 9, .installation("c")) == false)
            #expect(
                try await store.ledger.leaseDeliveries(id: 9, installations: ["a", "b"], owner: "w2", duration: .seconds(30)) == [
                    .leased, .leased,
                ])
            // Released into a ledger that had expired: the key it makes expires too.
            try await redis.send("DEL", keys.ledger(9))
            try await store.ledger.releaseLeases([DeliveryKey(notification: 9, installation: "a")])
            #expect(try await redis.send("TTL", keys.ledger(9)).int ?? 0 > 0)
            try await redis.send("DEL", keys.ledger(9))
            try await store.ledger.recordDeliveries(
                id: 9, results: [DeliveryResult(installation: "b", counter: .retried, error: "no answer")])
            #expect(try await redis.send("TTL", keys.ledger(9)).int ?? 0 > 0)
        }
    }
    /// A notification in flight across the upgrade that moved each device's entry into its
    /// ledger value: its bare marks (`R`, `T`, `F`) keep their entries in the devices hash, and
    /// the status, leases, receipts, new outcomes and dead letters read and write both.
    @Test func entriesWrittenBeforeTheyMovedIntoTheLedgerStillCount() async throws {
        try await Self.withStore { redis, keys, store in
            let id = try await store.create(
                NotificationDraft(
                    message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                    creator: "alice", target: "username:alice"), hashing: { _ in "hash" }
            ).id
            // As the previous version left it: a sent, b retried, c failed by a dead letter, d leased.
            try await redis.send("HSET", keys.ledger(id), "a", "R", "b", "T", "c", "F", "d", "L:1:gone-worker")
            try await redis.send(
                "HSET", keys.devices(id), "a", #"{"adapterID":"x1","state":"sent"}"#, "b", #"{"error":"try later","state":"retried"}"#,
                "c", #"{"error":"gave up","state":"failed"}"#)
            try await redis.send("HSET", keys.notification(id), "sent", 1, "retried", 1, "failed", 1, "state", "sent")
            var status = try #require(try await store.status(id: id))
            #expect(status.devices.map(\.installation) == ["a", "b", "c"])
            #expect(status.devices.map(\.state) == ["sent", "retried", "failed"])
            #expect(status.devices.first?.adapterID == "x1")

            // A receipt for a: its entry in the devices hash says so.
            #expect(
                try await store.recordReceipt(id: id, kind: .displayed, installation: "a", reader: "alice", if: .installation("a"))
                    == .counted)
            // a is recorded; b, c (taking its failure back) and d (its lease expired) are leased.
            #expect(
                try await store.ledger.leaseDeliveries(id: id, installations: ["a", "b", "c", "d"], owner: "w1", duration: .seconds(30))
                    == [.recorded, .leased, .leased, .leased])
            status = try #require(try await store.status(id: id))
            #expect(status.counts["failed"] == 0)
            #expect(status.devices.map(\.state) == ["displayed", "retried", "queued"])
            // New outcomes carry their entries in the ledger, and the status shows them.
            try await store.ledger.recordDeliveries(
                id: id,
                results: [
                    DeliveryResult(installation: "b", counter: .sent, adapterID: "x2"),
                    DeliveryResult(installation: "c", counter: .sent, adapterID: "x3"),
                    DeliveryResult(installation: "d", counter: .invalidToken, error: "gone"),
                ])
            status = try #require(try await store.status(id: id))
            #expect(status.devices.map(\.installation) == ["a", "b", "c", "d"])
            #expect(status.devices.map(\.state) == ["displayed", "sent", "sent", "invalidToken"])
            #expect(status.devices.map(\.adapterID) == ["x1", "x2", "x3", nil])
            let values = try await redis.send("HMGET", keys.ledger(id), "a", "b", "d").array?.map { Self.timeless($0.string) }
            #expect(values == ["R", #"R{"adapterID":"x2","state":"sent"}"#, #"R{"error":"gone","state":"invalidToken"}"#])
            // A receipt for b updates the entry in its ledger value, under its mark.
            #expect(
                try await store.recordReceipt(id: id, kind: .opened, installation: "b", reader: "alice", if: .installation("b")) == .counted
            )
            #expect(try await redis.send("HGET", keys.ledger(id), "b").string?.hasPrefix("R{") == true)
            #expect(try #require(try await store.status(id: id)).devices.first { $0.installation == "b" }?.state == "opened")
            #expect(try #require(try await store.status(id: id)).devices.first { $0.installation == "b" }?.adapterID == "x2")
        }
    }
}
