import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// The rich-push handler's ``RichPushJobHandler/willDeadLetter(_:)`` on the in-memory store: the
/// devices a dead-lettered job did not reach say failed, and a replay (or a rerun) sends them.
@Suite("Dead-lettered rich pushes, in memory")
struct DeadLetterLogicTests {
    @Test func aGivenUpJobMarksItsDevicesFailedAndAReplaySendsThem() async throws {
        let platform = FlakyPlatform()
        let setup = try await DeliveryLogicTests.Setup { _ in platform.outcome }
        guard case .retry = DeliveryLogicTests.disposition(await setup.run()) else { Issue.record("expected a retry"); return }
        let job = Job(id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: setup.id).payload, enqueuedAt: 0)
        try await setup.handler.willDeadLetter([(job, "gave up after 5 attempts")])
        try await setup.handler.willDeadLetter([(job, "gave up after 5 attempts")])
        var status = try #require(try await setup.notifications.status(id: setup.id))
        #expect(status.state == .failed && status.counts["failed"] == 3)
        #expect(status.devices.allSatisfy { $0.state == "failed" && $0.error == "gave up after 5 attempts; its last error: platform down" })
        #expect(setup.notifications.ledgerEntry(DeliveryKey(notification: setup.id, installation: "i0")) == "F")

        try await setup.notifications.reviveDeadLettered([DeliveryScope(notification: setup.id)])
        status = try #require(try await setup.notifications.status(id: setup.id))
        #expect(status.state == .queued && status.counts["failed"] == 0 && status.devices.allSatisfy { $0.state == "queued" })
        platform.healthy.store(true, ordering: .relaxed)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(try await setup.counts()["sent"] == 3)
        #expect(try await setup.notifications.status(id: setup.id)?.state == .sent)
    }

    /// Without the replay's revive (it failed, or the job is replayed from history), the rerun's
    /// lease takes the marks back itself.
    @Test func aRerunTakesTheMarksBackAsItLeases() async throws {
        let platform = FlakyPlatform()
        let setup = try await DeliveryLogicTests.Setup { _ in platform.outcome }
        _ = await setup.run()
        let job = Job(
            id: "1-0", type: RichPushJob.batchType,
            payload: RichPushJob.request(notification: setup.id, installations: ["i0", "i1", "i9"]).payload,
            enqueuedAt: 0)
        try await setup.handler.willDeadLetter([(job, "payload too large")])
        #expect(try await setup.counts()["failed"] == 2, "i0 and i1; not i2 (not the batch's), nor i9 (no such device: never to be pushed)")
        #expect(setup.notifications.ledgerEntry(DeliveryKey(notification: setup.id, installation: "i9")) == nil)
        #expect(try await setup.notifications.status(id: setup.id)?.state == .failed)
        platform.healthy.store(true, ordering: .relaxed)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        let counts = try await setup.counts()
        #expect(counts["sent"] == 3 && counts["failed"] == 0)
        #expect(try await setup.notifications.status(id: setup.id)?.state == .sent)
    }
}

/// A platform whose pushes fail retryably ("platform down") until it is healthy.
final class FlakyPlatform: Sendable {
    let healthy = Atomic<Bool>(false)

    var outcome: PushOutcome {
        healthy.load(ordering: .relaxed) ? .sent(adapterID: "ok") : .failed(reason: "platform down", retryable: true)
    }
}
