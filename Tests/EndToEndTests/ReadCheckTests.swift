import RedisTestSupport
import RichPushCore
import RichPushInMemory
import Testing

@testable import RichPushStorage

/// The store's read check (``ReadCheck``): its creator reads it, so does the owner of a device
/// it was addressed to; nobody reads a missing one. Both stores answer alike, and an unreadable
/// fetch or receipt records nothing.
@Suite("Read check")
struct ReadCheckTests {
    @Test func theRedisStoreDecidesAsTheSpecSays() async throws {
        try await DeliveryLedgerTests.withStore { _, _, store in
            try await Self.check(store, ledger: store.ledger)
        }
    }

    @Test func theInMemoryStoreDecidesAlike() async throws {
        let store = InMemoryNotifications()
        try await Self.check(store, ledger: store)
    }

    static func check(_ store: some NotificationStore, ledger: some DeliveryLedger) async throws {
        let id = try await store.create(
            NotificationDraft(
                message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice",
                target: "username:bob"), hashing: { _ in "hash" }
        ).id
        let missing = id + 1000
        // Addressed to bob's device b: its lease is taken before the push.
        #expect(
            try await ledger.leaseDeliveries([DeliveryKey(notification: id, installation: "b")], owner: "w", duration: .seconds(60)) == [
                .leased
            ])

        #expect(try await store.isReadable(id: id, .user("alice", installations: [])), "its creator, with no device")
        #expect(try await store.isReadable(id: id, .user("bob", installations: ["x", "b"])), "bob, through b")
        #expect(try await store.isReadable(id: id, .installation("b")))
        #expect(try await store.isReadable(id: id, .user("carol", installations: ["c"])) == false, "someone else's")
        #expect(try await store.isReadable(id: id, .user("carol", installations: [])) == false)
        #expect(try await store.isReadable(id: id, ReadCheck(creator: nil, addressees: [])) == false)
        #expect(try await store.isReadable(id: missing, .user("alice", installations: ["b"])) == false, "a missing one")

        // An unreadable fetch or receipt records nothing; a readable one counts once.
        #expect(try await store.recordFetch(id: id, installation: "c", reader: "carol", if: .user("carol", installations: ["c"])) == false)
        #expect(try await store.recordFetch(id: missing, installation: "b", reader: "bob", if: .installation("b")) == false)
        #expect(try await store.recordFetch(id: missing, installation: "b", reader: "bob", if: nil) == false, "no record, nothing to count")
        #expect(try await store.status(id: id)?.counts["fetched"] == 0)
        #expect(try await store.recordFetch(id: id, installation: "b", reader: "bob", if: .user("bob", installations: ["b"])))
        #expect(try await store.status(id: id)?.counts["fetched"] == 1)
        #expect(
            try await store.recordReceipt(
                id: id, kind: .opened, installation: "c", reader: "carol", if: .user("carol", installations: ["c"]))
                == .unreadable)
        #expect(try await store.recordReceipt(id: missing, kind: .opened, installation: nil, reader: "alice", if: nil) == .unreadable)
        #expect(try await store.status(id: id)?.counts["opened"] == 0)
        #expect(
            try await store.recordReceipt(id: id, kind: .opened, installation: nil, reader: "alice", if: .user("alice", installations: []))
                == .counted)
        #expect(try await store.status(id: id)?.counts["opened"] == 1)
    }
}
