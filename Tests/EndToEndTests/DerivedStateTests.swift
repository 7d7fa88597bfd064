import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
@testable import RichPushStorage
import Testing

/// A notification's state past `queued` is derived from its counters: a push, a fetch and a
/// receipt write their counter and nothing else (no read and write of the state each). The
/// status lives in the record's hash; a status written before (a hash of its own, maybe a later
/// state stored) reads as it did, and what is written after it adds up with it.
@Suite("Derived delivery state")
struct DerivedStateTests {
    static let draft = NotificationDraft(message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: "t")

    @Test func theCountersMoveTheStateOnWithoutWritingIt() async throws {
        try await DeliveryLedgerTests.withServerAndStore { server, redis, keys, store in
            try await server.probe("CONFIG", "RESETSTAT")
            let id = try await store.create(Self.draft) { _ in "h" }.id
            #expect(try await server.commandCalls("hset") == 1, "the record with its state")
            #expect(try await server.commandCalls("expire") == 2, "the record's expiry and the creator index's")
            #expect(try await redis.send("EXISTS", keys.legacyStatus(id)).int == 0)
            #expect(try await store.status(id: id)?.state == .queued)
            #expect(try await store.ledger.leaseDeliveries(id: id, installations: ["a"], owner: "w1", duration: .seconds(600)) == [.leased])

            try await server.probe("CONFIG", "RESETSTAT")
            try await store.ledger.recordDeliveries(id: id, results: [DeliveryResult(installation: "a", counter: .sent)])
            #expect(try await server.commandCalls("hget") == 0, "the record reads no state")
            #expect(try await server.commandCalls("hset") == 1, "the ledger's entry is the record's only HSET")
            #expect(try await store.status(id: id)?.state == .sent)

            #expect(try await store.recordFetch(id: id, installation: "a", reader: "alice", ifAddressedTo: ["a"]))
            #expect(try await store.status(id: id)?.state == .fetched)
            #expect(try await store.recordReceipt(id: id, kind: .displayed, installation: "a", reader: "alice", ifAddressedTo: ["a"]) == .counted)
            #expect(try await store.states(ids: [id]) == [id: .displayed])
            #expect(try await store.recordReceipt(id: id, kind: .opened, installation: "a", reader: "alice", ifAddressedTo: ["a"]) == .counted)
            #expect(try await store.status(id: id)?.state == .opened)
            #expect(try await store.states(ids: [id, id + 1000]) == [id: .opened], "an id with no status is left out")
            // What is stored stays what the create wrote, in the record; a cancel reads the derived state.
            #expect(try await redis.send("HGET", keys.notification(id), StatusField.state.rawValue).string == DeliveryState.queued.rawValue)
            #expect(try await store.cancel(id: id) == .tooLate(.opened))
        }
    }

    @Test func aStatusWrittenBeforeTheStateWasDerivedReadsAsItDid() async throws {
        try await DeliveryLedgerTests.withStore { redis, keys, store in
            // Written by an older release, in a hash of its own: the state advanced to `fetched`.
            try await redis.send("HSET", keys.legacyStatus(5), "state", "fetched", "sent", 1, "fetched", 1)
            #expect(try await store.status(id: 5)?.state == .fetched)
            #expect(try await store.states(ids: [5]) == [5: .fetched])
            #expect(try await store.cancel(id: 5) == .tooLate(.fetched))
            // A stored state later than the counters tell (a legacy `displayed` with no receipt
            // counted yet) is kept; a counter later than the stored state wins.
            try await redis.send("HSET", keys.legacyStatus(6), "state", "displayed", "sent", 1)
            #expect(try await store.status(id: 6)?.state == .displayed)
            try await redis.send("HSET", keys.legacyStatus(7), "state", "failed", "held", 2)
            #expect(try await store.status(id: 7)?.state == .sent)
            #expect(try await store.cancel(id: 7) == .tooLate(.sent))
            try await redis.send("HSET", keys.legacyStatus(8), "state", "failed", "failed", 1)
            #expect(try await store.status(id: 8)?.state == .failed)
            try await Self.writeLegacyRecords([7, 8], redis: redis, keys: keys)
            #expect(try await store.ledger.notificationsToSend(ids: [8]).cancelled.isEmpty)
            #expect(try await store.cancel(id: 8) == .cancelled)
            // The cancel is written where the status lives now, and read back from there.
            #expect(try await redis.send("HGET", keys.notification(8), "state").string == "cancelled")
            #expect(try await store.ledger.notificationsToSend(ids: [7, 8, 9]).cancelled == [8])
            #expect(try await store.status(id: 8)?.state == .cancelled)
            // Counters written after the move (into the record) add up with the legacy ones.
            try await redis.send("HSET", keys.legacyStatus(10), "state", "queued", "sent", 2, "failed", 1)
            try await redis.send("HSET", keys.notification(10), "message", "m", "sent", 3)
            let status = try #require(try await store.status(id: 10))
            #expect(status.state == .sent && status.counts["sent"] == 5 && status.counts["failed"] == 1)
            #expect(try await store.cancel(id: 10) == .tooLate(.sent))
            #expect(try await store.status(id: 11) == nil)
        }
    }

    /// A worker reads a record and its state in one command (they share the hash), a cached
    /// record's state alone, and a record from before the move its legacy status's state.
    @Test func aWorkerReadsARecordWithItsState() async throws {
        try await DeliveryLedgerTests.withServerAndStore { server, redis, keys, store in
            let id = try await store.create(Self.draft) { _ in "h" }.id
            let ledger = store.ledger
            try await server.probe("CONFIG", "RESETSTAT")
            let first = try await ledger.notificationsToSend(ids: [id, id + 1000])
            #expect(first.records.map(\.id) == [id] && first.cancelled.isEmpty)
            #expect(try await server.commandCalls("hmget") == 2, "one HMGET per record")
            #expect(try await server.commandCalls("hget") == 0, "nothing more")
            #expect(try await store.cancel(id: id) == .cancelled)
            try await server.probe("CONFIG", "RESETSTAT")
            let again = try await ledger.notificationsToSend(ids: [id])
            #expect(again.records.map(\.id) == [id] && again.cancelled == [id])
            #expect(try await server.commandCalls("hmget") == 0, "the record is cached")
            #expect(try await server.commandCalls("hget") == 1, "its state alone")
            // A record from before the move, cancelled then: its state is in the legacy status.
            let old = id + 1
            try await Self.writeLegacyRecords([old], redis: redis, keys: keys)
            try await redis.send("HSET", keys.legacyStatus(old), "state", "cancelled")
            #expect(try await ledger.notificationsToSend(ids: [old, id]).cancelled == [old, id])
        }
    }

    /// Records as an older release wrote them (no status fields in them).
    static func writeLegacyRecords(_ ids: [Int], redis: RedisConnection, keys: StorageKeys) async throws {
        for id in ids {
            try await redis.send("HSET", keys.notification(id), "message", "m", "type", "text", "contentType", "text/plain", "payload", "h", "size", 1,
                                 "creator", "alice", "target", "t", "created", 1)
        }
    }

    /// The status shares the record's hash: no status field may be a record field.
    @Test func theStatusFieldsAreNotRecordFields() {
        let record: Set = ["message", "type", "contentType", "payload", "size", "creator", "target", "created", "ttl", "collapse", "priority",
                           "sendAt", "throttle", "properties", "locale", "app"]
        let status = Set(StatusField.allCases.map(\.rawValue) + DeliveryCounter.allCases.map(\.rawValue))
        #expect(record.isDisjoint(with: status), "\(record.intersection(status))")
    }

    @Test func theDerivation() {
        func derived(_ stored: DeliveryState?, _ counts: [DeliveryCounter: Int]) -> DeliveryState {
            DeliveryState.derived(stored: stored) { counts[$0] ?? 0 }
        }
        #expect(derived(nil, [:]) == .accepted)
        #expect(derived(.scheduled, [:]) == .scheduled)
        #expect(derived(.queued, [.held: 1]) == .sent)
        #expect(derived(.queued, [.sent: 3, .fetched: 1, .opened: 1]) == .opened, "the furthest counter, not the first")
        #expect(derived(.queued, [.failed: 2, .retried: 1, .invalidToken: 1, .expired: 1, .duplicateSuppressed: 1]) == .queued)
        #expect(derived(.failed, [.sent: 1]) == .sent)
        #expect(derived(.cancelled, [.opened: 1]) == .cancelled)
        #expect(derived(.displayed, [.sent: 1]) == .displayed)
    }
}
