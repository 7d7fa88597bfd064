import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
@testable import RichPushStorage
import Testing

/// A notification's state past `queued` is derived from its counters: a push, a fetch and a
/// receipt write their counter and nothing else (no read and write of the state each), and a
/// status written before the state was derived (a later state stored) reads as it did.
@Suite("Derived delivery state")
struct DerivedStateTests {
    @Test func theCountersMoveTheStateOnWithoutWritingIt() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("derived").dropLast()))
            let store = RedisNotificationStore(redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                                               retention: .seconds(3600))
            let draft = NotificationDraft(message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: "t")
            let id = try await store.create(draft) { _ in "h" }.id
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
            // What is stored stays what the create wrote; a cancel reads the derived state.
            #expect(try await redis.send("HGET", keys.status(id), StatusField.state.rawValue).string == DeliveryState.queued.rawValue)
            #expect(try await store.cancel(id: id) == .tooLate(.opened))
            await redis.close()
        }
    }

    @Test func aStatusWrittenBeforeTheStateWasDerivedReadsAsItDid() async throws {
        try await DeliveryLedgerTests.withStore { redis, keys, store in
            // Written by an older release: the state advanced to `fetched`, its counters as they were.
            try await redis.send("HSET", keys.status(5), "state", "fetched", "sent", 1, "fetched", 1)
            #expect(try await store.status(id: 5)?.state == .fetched)
            #expect(try await store.states(ids: [5]) == [5: .fetched])
            #expect(try await store.cancel(id: 5) == .tooLate(.fetched))
            // A stored state later than the counters tell (a legacy `displayed` with no receipt
            // counted yet) is kept; a counter later than the stored state wins.
            try await redis.send("HSET", keys.status(6), "state", "displayed", "sent", 1)
            #expect(try await store.status(id: 6)?.state == .displayed)
            try await redis.send("HSET", keys.status(7), "state", "failed", "held", 2)
            #expect(try await store.status(id: 7)?.state == .sent)
            #expect(try await store.cancel(id: 7) == .tooLate(.sent))
            try await redis.send("HSET", keys.status(8), "state", "failed", "failed", 1)
            #expect(try await store.status(id: 8)?.state == .failed)
            #expect(try await store.cancel(id: 8) == .cancelled)
        }
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
