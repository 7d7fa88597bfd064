import Foundation
import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import Synchronization
import Testing

@testable import RichPushWorker

/// A worker's memory stays bounded whatever the audience: a read of many fan-out sub-jobs is
/// sent in rounds of at most `maxPushesPerRound` pushes, and the batches running at once share
/// that bound (`PushBudget`).
@Suite("Push rounds")
struct PushRoundsTests {
    @Test func manySubJobsAreSentInRoundsWithinTheBound() async throws {
        let installations = InMemoryInstallationStore(
            (0..<500).map {
                Installation(id: "i\($0)", platform: .apns, handle: "h\($0)", tags: ["news"], owner: "alice", updatedAt: 0)
            })
        let notifications = InMemoryNotifications()
        let adapter = InMemoryPushAdapter()
        let handler = RichPushJobHandler(
            ledger: notifications, installations: installations, queue: InMemoryJobQueue(), adapter: adapter,
            renderer: PushRenderer(), fanOutBatch: 50, maxPushesPerRound: 120)
        let id = try await notifications.create(
            NotificationDraft(
                message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                creator: "alice", target: "news"), hashing: { _ in "hash" }
        ).id
        // Ten sub-jobs of 50 installations each, read together.
        let jobs = (0..<10).map { part in
            let request = RichPushJob.request(notification: id, installations: (0..<50).map { "i\(part * 50 + $0)" })
            return Job(id: "\(part + 1)-0", type: request.type, payload: request.payload, enqueuedAt: 0)
        }
        let results = await handler.handle(batch: jobs)
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } }, "\(results)")
        #expect(Set(adapter.pushes.map(\.installation.id)).count == 500, "every device once")
        #expect(adapter.pushes.count == 500)
        // 120 a round: two sub-jobs (100 pushes) each, five rounds.
        #expect(adapter.sendSizes.allSatisfy { $0 <= 120 }, "\(adapter.sendSizes)")
        #expect(adapter.sendSizes.count >= 5, "\(adapter.sendSizes)")
    }

    @Test func aRoundWaitsUntilTheRoundsBeforeItLeaveRoom() async throws {
        let budget = PushBudget(limit: 100)
        await budget.acquire(80)
        let admitted = Admitted()
        let second = Task {
            await budget.acquire(50)
            admitted.flag.store(true, ordering: .sequentiallyConsistent)
        }
        try await Task.sleep(for: .milliseconds(100))
        let early = admitted.flag.load(ordering: .sequentiallyConsistent)
        #expect(!early, "80 + 50 exceeds the budget of 100: the second waits")
        await budget.release(80)
        await second.value
        let late = admitted.flag.load(ordering: .sequentiallyConsistent)
        #expect(late)
        // A round larger than the whole budget takes all of it rather than waiting for ever.
        await budget.release(50)
        await budget.acquire(1_000)
        await budget.release(1_000)
    }
}

private final class Admitted: Sendable {
    let flag = Atomic<Bool>(false)
}
