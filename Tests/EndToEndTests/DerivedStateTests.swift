import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

@testable import RichPushStorage

/// A notification's state past `queued` is derived from its counters: a push, a fetch and a
/// receipt write their counter and nothing else (no read and write of the state each). The
/// status lives in the record's hash; a status written by schema 1 (a hash of its own, maybe a
/// later state stored) is merged into it by the migration, and reads as it did.
@Suite("Derived delivery state")
struct DerivedStateTests {
    static let draft = NotificationDraft(
        message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: "t")

    @Test func theCountersMoveTheStateOnWithoutWritingIt() async throws {
        try await DeliveryLedgerTests.withServerAndStore { server, redis, keys, store in
            try await server.probe("CONFIG", "RESETSTAT")
            let id = try await store.create(Self.draft) { _ in "h" }.id
            #expect(try await server.commandCalls("hset") == 1, "the record with its state")
            #expect(try await server.commandCalls("expire") == 2, "the record's expiry and the creator index's")
            #expect(try await redis.send("GET", keys.schemaVersion).int == SchemaVersion.current, "the first ids stamp the schema")
            #expect(try await store.status(id: id)?.state == .queued)
            #expect(try await store.ledger.leaseDeliveries(id: id, installations: ["a"], owner: "w1", duration: .seconds(600)) == [.leased])

            try await server.probe("CONFIG", "RESETSTAT")
            try await store.ledger.recordDeliveries(id: id, results: [DeliveryResult(installation: "a", counter: .sent)])
            #expect(try await server.commandCalls("hget") == 0, "the record reads no state")
            #expect(try await server.commandCalls("hset") == 1, "the ledger's entry is the record's only HSET")
            #expect(try await store.status(id: id)?.state == .sent)

            #expect(try await store.recordFetch(id: id, installation: "a", reader: "alice", if: .installation("a")))
            #expect(try await store.status(id: id)?.state == .fetched)
            #expect(
                try await store.recordReceipt(id: id, kind: .displayed, installation: "a", reader: "alice", if: .installation("a"))
                    == .counted)
            #expect(try await store.states(ids: [id]) == [id: .displayed])
            #expect(
                try await store.recordReceipt(id: id, kind: .opened, installation: "a", reader: "alice", if: .installation("a")) == .counted
            )
            #expect(try await store.status(id: id)?.state == .opened)
            #expect(try await store.states(ids: [id, id + 1000]) == [id: .opened], "an id with no status is left out")
            // What is stored stays what the create wrote, in the record; a cancel reads the derived state.
            #expect(try await redis.send("HGET", keys.notification(id), StatusField.state.rawValue).string == DeliveryState.queued.rawValue)
            #expect(try await store.cancel(id: id) == .tooLate(.opened))
        }
    }

    @Test func theMigrationMergesSchemaOneStatusesSoTheyReadAsTheyDid() async throws {
        try await DeliveryLedgerTests.withServerAndStore { server, redis, keys, store in
            func status(_ id: Int, app: String? = nil) -> String { "\(keys.prefix)\(app.map { ":app:\($0)" } ?? ""):{q0}:status:\(id)" }
            // Schema 1 data: statuses in hashes of their own beside their records.
            try await redis.send("SET", keys.notificationSequence, 20)
            try await Self.writeLegacyRecords([5, 6, 7, 8, 9, 10], redis: redis, keys: keys)
            try await redis.send("HSET", status(5), "state", "fetched", "sent", 1, "fetched", 1)
            // A stored state later than the counters tell (a `displayed` with no receipt counted
            // yet) is kept; a counter later than the stored state wins.
            try await redis.send("HSET", status(6), "state", "displayed", "sent", 1)
            try await redis.send("HSET", status(7), "state", "failed", "held", 2)
            try await redis.send("HSET", status(8), "state", "failed", "failed", 1)
            // Counters written after the move (into the record) add up with the old ones; the
            // record's state wins.
            try await redis.send("HSET", status(10), "state", "queued", "sent", 2, "failed", 1)
            try await redis.send("HSET", keys.notification(10), "state", "sent", "sent", 3)
            // One whose record expired, another app's, and a key the SCAN pattern matches that is
            // no status hash.
            try await redis.send("HSET", status(12), "state", "queued")
            try await redis.send("HSET", "\(keys.prefix):app:shop:{q0}:notif:13", "message", "m")
            try await redis.send("HSET", status(13, app: "shop"), "state", "queued", "sent", 4)
            let decoy = "\(keys.prefix):inst:x:status:1"
            try await redis.send("HSET", decoy, "state", "queued")

            await #expect(throws: SchemaVersion.Mismatch.self) { try await SchemaVersion.checkAtStart(redis: redis, keys: keys) }
            let migration = SchemaMigration(redis: redis, keys: keys, nodes: [server.configuration])
            let dry = try await migration.run(dryRun: true)
            #expect(dry == SchemaMigration.Report(from: 1, to: 1, merged: 6, orphaned: 1, nodesScanned: 1))
            #expect(try await redis.send("EXISTS", status(5), status(12), status(13, app: "shop")).int == 3, "a dry run writes nothing")
            #expect(try await SchemaVersion.stored(redis: redis, keys: keys) == 1)

            var small = migration
            small.batchSize = 2
            #expect(try await small.run(dryRun: false) == SchemaMigration.Report(from: 1, to: 2, merged: 6, orphaned: 1, nodesScanned: 1))
            #expect(
                try await redis.send("EXISTS", status(5), status(6), status(7), status(8), status(10), status(12), status(13, app: "shop"))
                    .int == 0)
            #expect(try await redis.send("EXISTS", decoy).int == 1, "not a status hash")
            try await SchemaVersion.checkAtStart(redis: redis, keys: keys)
            #expect(try await migration.run(dryRun: false) == SchemaMigration.Report(from: 2, to: 2), "a second run has nothing to do")

            #expect(try await store.status(id: 5)?.state == .fetched)
            #expect(try await store.states(ids: [5]) == [5: .fetched])
            #expect(try await store.cancel(id: 5) == .tooLate(.fetched))
            #expect(try await store.status(id: 6)?.state == .displayed)
            #expect(try await store.status(id: 7)?.state == .sent)
            #expect(try await store.cancel(id: 7) == .tooLate(.sent))
            #expect(try await store.status(id: 8)?.state == .failed)
            #expect(try await store.ledger.notificationsToSend(ids: [8]).cancelled.isEmpty)
            #expect(try await store.cancel(id: 8) == .cancelled)
            #expect(try await store.ledger.notificationsToSend(ids: [7, 8, 9]).cancelled == [8])
            #expect(try await store.status(id: 9) == nil, "a record with no status (none was written) has none")
            let merged = try #require(try await store.status(id: 10))
            #expect(merged.state == .sent && merged.counts["sent"] == 5 && merged.counts["failed"] == 1)
            #expect(try await redis.send("HGET", keys.notification(10), "state").string == "sent")
            #expect(try await store.status(id: 12) == nil)
            let shop = try await redis.send("HMGET", "\(keys.prefix):app:shop:{q0}:notif:13", "state", "sent").array?.map(\.string)
            #expect(shop == ["queued", "4"])
        }
    }

    @Test func aStatusKeyIsRecognisedByItsWholeName() {
        for key in ["p:{q0}:status:1", "p:app:shop:{q3}:status:42", "p:{q0}:status:007"] {
            #expect(SchemaMigration.isStatusKey(key, prefix: "p"), "\(key)")
        }
        for key in [
            "p:inst:x:status:1", "p:{q0}:status:", "p:{q0}:status:1x", "pp:{q0}:status:1", "p:app::{q0}:status:1",
            "p:app:a{b:{q0}:status:1",
            "p:{q0}:notif:1", "p:{q0}:status:1:status:2", "p:{q{0}:status:1", "p:{q0}x:status:1",
        ] {
            #expect(!SchemaMigration.isStatusKey(key, prefix: "p"), "\(key)")
        }
        #expect(SchemaMigration.recordKey(ofStatus: "p:app:shop:{q3}:status:42") == "p:app:shop:{q3}:notif:42")
        #expect(SchemaMigration.globEscaped("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\")
    }

    /// A worker reads a record and its state in one command (they share the hash), a cached
    /// record's state alone.
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
        }
    }

    /// Records as schema 1 wrote them (no status fields in them).
    static func writeLegacyRecords(_ ids: [Int], redis: RedisConnection, keys: StorageKeys) async throws {
        for id in ids {
            try await redis.send(
                "HSET", keys.notification(id), "message", "m", "type", "text", "contentType", "text/plain", "payload", "h", "size", 1,
                "creator", "alice", "target", "t", "created", 1)
        }
    }

    /// The status shares the record's hash: no status field may be a record field.
    @Test func theStatusFieldsAreNotRecordFields() {
        let record = Set(RecordField.allCases.map(\.rawValue))
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
