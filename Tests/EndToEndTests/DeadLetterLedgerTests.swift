import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// What a dead-lettered delivery job leaves in the ledger and the status, against a real Redis:
/// which pairs it marks failed, the `failed` events, and how a lease or a replay takes it back.
@Suite("Dead-lettered deliveries in the ledger")
struct DeadLetterLedgerTests {
    static func create(_ store: RedisNotificationStore) async throws -> Int {
        try await store.create(
            NotificationDraft(
                message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                creator: "alice", target: "username:alice"), hashing: { _ in "hash" }
        ).id
    }

    /// The `failed` events in the outbox: per entry, its items.
    static func failedEvents(_ redis: RedisConnection, _ keys: StorageKeys) async throws -> [[[String: Any]]] {
        let entries = try await redis.send("XRANGE", keys.webhookOutbox, "-", "+").array ?? []
        return entries.compactMap { entry in
            let flat = entry.array?.last?.array?.compactMap(\.string) ?? []
            let fields = Dictionary(stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }, uniquingKeysWith: { $1 })
            guard fields["t"] == "failed", let items = fields["e"] else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(items.utf8))) as? [[String: Any]]
        }
    }

    static func ledger(_ redis: RedisConnection, _ keys: StorageKeys, _ id: Int, _ fields: [String]) async throws -> [String?] {
        var command = RedisCommand("HMGET", keys.ledger(id))
        for field in fields { command.append(field) }
        return try await redis.send(command).array?.map(\.string) ?? []
    }

    /// The ledger's marks of these pairs (`R`, `T`, `F`, `L`), without the device entries they carry.
    static func marks(_ redis: RedisConnection, _ keys: StorageKeys, _ id: Int, _ fields: [String]) async throws -> [String?] {
        try await ledger(redis, keys, id, fields).map { $0.map { String($0.prefix(1)) } }
    }

    /// A fan-out batch of five: sent (recorded), retried (given back), leased by a live worker,
    /// leased by a worker that died, never leased. The last three without a live owner are marked.
    @Test func aBatchMarksTheDevicesWithoutAnOutcomeOnceAndALeaseOrAReplayTakesThemBack() async throws {
        try await DeliveryLedgerTests.withStore { redis, keys, store in
            let id = try await Self.create(store)
            try await redis.send("HSET", keys.webhookWants, "failed:alice", 1)
            #expect(
                try await store.ledger.leaseDeliveries(id: id, installations: ["a", "b", "c"], owner: "w1", duration: .seconds(30)) == [
                    .leased, .leased, .leased,
                ])
            try await store.ledger.recordDeliveries(
                id: id,
                results: [
                    DeliveryResult(installation: "a", counter: .sent, adapterID: "x"),
                    DeliveryResult(installation: "b", counter: .retried, error: "platform down"),
                ])
            try await redis.send("HSET", keys.ledger(id), "d", "L:1:dead-worker")
            let scope = DeliveryScope(notification: id, installations: ["a", "b", "c", "d", "e"])
            try await store.ledger.recordDeadLettered([scope: "gave up after 5 attempts: 1 pushes failed"])
            try await store.ledger.recordDeadLettered([scope: "gave up after 5 attempts: 1 pushes failed"])  // again: nothing more

            #expect(try await Self.marks(redis, keys, id, ["a", "b", "d", "e"]) == ["R", "F", "F", "F"])
            #expect(try await Self.ledger(redis, keys, id, ["c"]).first??.hasPrefix("L:") == true, "a live lease is its owner's")
            var status = try #require(try await store.status(id: id))
            #expect(status.counts["failed"] == 3 && status.counts["sent"] == 1)
            #expect(status.state == .sent, "a push went out: the notification stays sent")
            let failed = status.devices.filter { $0.state == "failed" }
            #expect(failed.map(\.installation) == ["b", "d", "e"])
            #expect(failed.allSatisfy { $0.error?.hasPrefix("gave up after 5 attempts") == true })
            #expect(failed.first?.error?.hasSuffix("its last error: platform down") == true)
            let events = try await Self.failedEvents(redis, keys)
            #expect(events.count == 1, "one entry, not repeated by the second call")
            #expect(events.first?.compactMap { $0["installation"] as? String }.sorted() == ["b", "d", "e"])
            #expect(try await store.isReadable(id: id, .installation("e")), "a device the batch was meant for")

            // A rerun of the job leases b again: its failure is taken back.
            #expect(try await store.ledger.leaseDeliveries(id: id, installations: ["b"], owner: "w2", duration: .seconds(30)) == [.leased])
            status = try #require(try await store.status(id: id))
            #expect(status.counts["failed"] == 2)
            #expect(status.devices.first { $0.installation == "b" }?.state == "queued")

            // The replay of the dead letter takes back the rest; b, leased, is left to its owner.
            try await store.ledger.reviveDeadLettered([scope])
            #expect(try await Self.marks(redis, keys, id, ["a", "d", "e"]) == ["R", "T", "T"])
            #expect(try await Self.ledger(redis, keys, id, ["b"]).first??.hasPrefix("L:w") == false)
            status = try #require(try await store.status(id: id))
            #expect(status.counts["failed"] == 0)
            #expect(status.devices.filter { $0.state == "queued" }.map(\.installation) == ["b", "d", "e"])
            #expect(status.devices.first { $0.installation == "d" }?.error == nil)
        }
    }

    /// A whole notification: its ledger's open pairs are marked; with an empty ledger (its target
    /// never resolved) the notification itself says failed, with one event naming no device.
    @Test func aWholeNotificationMarksItsLedgerOrItselfFailed() async throws {
        try await DeliveryLedgerTests.withStore { redis, keys, store in
            try await redis.send("HSET", keys.webhookWants, "failed:*", 1)
            let unresolved = try await Self.create(store)
            try await store.ledger.recordDeadLettered([DeliveryScope(notification: unresolved): "notification has an invalid target"])
            try await store.ledger.recordDeadLettered([DeliveryScope(notification: unresolved): "notification has an invalid target"])
            var status = try #require(try await store.status(id: unresolved))
            #expect(status.state == .failed && status.counts["failed"] == 0 && status.devices.isEmpty)
            let events = try await Self.failedEvents(redis, keys)
            #expect(events.count == 1)
            #expect(events.first?.first?["installation"] == nil)
            #expect((events.first?.first?["result"] as? [String: Any])?["error"] as? String == "notification has an invalid target")
            try await store.ledger.reviveDeadLettered([DeliveryScope(notification: unresolved)])
            #expect(try await store.status(id: unresolved)?.state == .queued)

            let tried = try await Self.create(store)
            _ = try await store.ledger.leaseDeliveries(id: tried, installations: ["x", "y"], owner: "w1", duration: .seconds(30))
            try await store.ledger.recordDeliveries(
                id: tried,
                results: [
                    DeliveryResult(installation: "x", counter: .invalidToken, error: "Unregistered"),
                    DeliveryResult(installation: "y", counter: .retried, error: "503"),
                ])
            try await store.ledger.recordDeadLettered([DeliveryScope(notification: tried): "gave up after 5 attempts"])
            #expect(try await Self.marks(redis, keys, tried, ["x", "y"]) == ["R", "F"])
            status = try #require(try await store.status(id: tried))
            #expect(status.state == .failed && status.counts["failed"] == 1 && status.counts["invalidToken"] == 1)
            // The job run again (a replay from history) leases y: queued again, then sent.
            #expect(
                try await store.ledger.leaseDeliveries(id: tried, installations: ["x", "y"], owner: "w2", duration: .seconds(30)) == [
                    .recorded, .leased,
                ])
            #expect(try await store.status(id: tried)?.state == .queued)
            try await store.ledger.recordDeliveries(id: tried, results: [DeliveryResult(installation: "y", counter: .sent)])
            status = try #require(try await store.status(id: tried))
            #expect(status.state == .sent && status.counts["failed"] == 0 && status.counts["sent"] == 1)
        }
    }

    /// A notification that expired meanwhile is left alone: nothing is created for it.
    @Test func anExpiredNotificationIsSkipped() async throws {
        try await DeliveryLedgerTests.withStore { redis, keys, store in
            try await store.ledger.recordDeadLettered([DeliveryScope(notification: 404, installations: ["a"]): "gave up"])
            try await store.ledger.reviveDeadLettered([DeliveryScope(notification: 404, installations: ["a"])])
            #expect(try await redis.send("EXISTS", keys.notification(404), keys.devices(404), keys.ledger(404)).int == 0)
        }
    }
}
