import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Testing

/// The console's test send as the worker sees it: a notification whose target every installation
/// matches and whose one job names the chosen installations reaches exactly those, recorded in
/// the ledger like any push.
@Suite("Test send delivery, in memory")
struct TestSendDeliveryTests {
    @Test func aJobNamingInstallationsReachesExactlyThose() async throws {
        let setup = try await DeliveryLogicTests.Setup(devices: 5)
        let id = try await setup.notifications.create(
            NotificationDraft(
                message: "test", richType: .text, contentType: "text/plain", payload: Array("test".utf8),
                creator: "ops", target: "console-test-send || !console-test-send"),
            hashing: { _ in "hash" }
        ).id
        let request = RichPushJob.request(notification: id, installations: ["i1", "i3"])
        let job = Job(id: "2-0", type: request.type, payload: request.payload, enqueuedAt: 0)
        let result = await setup.handler.handle(batch: [job])[0]
        #expect(DeliveryLogicTests.disposition(result) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i1", "i3"])
        let status = try #require(try await setup.notifications.status(id: id))
        #expect(status.counts["sent"] == 2)
        #expect(status.state == .sent)
        #expect(Set(status.devices.map(\.installation)) == ["i1", "i3"])
    }
}
