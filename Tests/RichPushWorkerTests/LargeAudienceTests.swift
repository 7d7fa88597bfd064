import Foundation
import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import Synchronization
import Testing

@testable import RichPushWorker

/// A worker holds one large audience at a time: the audiences of a batch are read one page per
/// tag together, and those larger than a page are resolved and split one job at a time, across
/// every batch the handler runs at once. Small audiences are sent as before.
@Suite("Large audiences")
struct LargeAudienceTests {
    @Test func largeAudiencesAreResolvedOneAtATimeAndSmallOnesAtOnce() async throws {
        let devices =
            (0..<3_000).map { Installation(id: "i\($0)", platform: .apns, handle: "h\($0)", tags: ["news"], owner: "alice", updatedAt: 0) }
            + [Installation(id: "solo", platform: .apns, handle: "hs", tags: ["solo"], owner: "alice", updatedAt: 0)]
        let installations = ScanCountingStore(InMemoryInstallationStore(devices))
        let notifications = InMemoryNotifications()
        let queue = InMemoryJobQueue()
        let adapter = InMemoryPushAdapter()
        let handler = RichPushJobHandler(
            ledger: notifications, installations: installations, queue: queue, adapter: adapter,
            renderer: PushRenderer(), fanOutBatch: 500)
        func job(_ target: String) async throws -> Job {
            let id = try await notifications.create(
                NotificationDraft(
                    message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                    creator: "alice", target: target), hashing: { _ in "hash" }
            ).id
            let request = RichPushJob.request(notification: id)
            return Job(id: "\(id)-0", type: request.type, payload: request.payload, enqueuedAt: 0)
        }
        var first: [Job] = []
        var second: [Job] = []
        for _ in 0..<4 { first.append(try await job("news")) }
        first.append(try await job("solo"))
        for _ in 0..<4 { second.append(try await job("news")) }
        // Two batches at once, as a worker runs them.
        async let a = handler.handle(batch: first)
        async let b = handler.handle(batch: second)
        let results = await a + b
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } }, "\(results)")
        // Eight full scans, never two at once.
        #expect(installations.fullScans.load(ordering: .relaxed) == 8)
        #expect(installations.mostAtOnce.load(ordering: .relaxed) == 1)
        // The small audience went out at once; each large one became sub-jobs covering it once.
        #expect(adapter.pushes.map(\.installation.id) == ["solo"])
        var covered: [Int: [String]] = [:]
        for request in queue.requests {
            let delivery = try RichPushJob.delivery(of: Job(id: "0-0", type: request.type, payload: request.payload, enqueuedAt: 0))
            covered[delivery.notification, default: []] += delivery.installations ?? []
        }
        #expect(covered.count == 8)
        #expect(covered.values.allSatisfy { $0.count == 3_000 && Set($0).count == 3_000 })
        #expect(queue.requests.count == 8 * 6)
    }
}

/// An installation store that counts the full scans of tags, and the most running at once.
final class ScanCountingStore: InstallationStore {
    let base: InMemoryInstallationStore
    let fullScans = Atomic<Int>(0)
    let running = Atomic<Int>(0)
    let mostAtOnce = Atomic<Int>(0)

    init(_ base: InMemoryInstallationStore) { self.base = base }

    func installationIDs(byHandles groups: [[String]]) async throws -> [[String]] { try await base.installationIDs(byHandles: groups) }

    func installationIDs(tags: [String?], pageSize: Int) async throws -> [[String]] {
        fullScans.add(1, ordering: .relaxed)
        let now = running.add(1, ordering: .relaxed).newValue
        _ = mostAtOnce.max(now, ordering: .relaxed)
        // Long enough for another batch to start one if nothing stopped it.
        try await Task.sleep(for: .milliseconds(50))
        running.subtract(1, ordering: .relaxed)
        return try await base.installationIDs(tags: tags, pageSize: pageSize)
    }

    func firstInstallationIDs(tags: [String?], pageSize: Int) async throws -> [(ids: [String], complete: Bool)] {
        try await base.firstInstallationIDs(tags: tags, pageSize: pageSize)
    }
    func registrationID(forHandle handle: String?, owner: String) async throws -> String {
        try await base.registrationID(forHandle: handle, owner: owner)
    }
    func save(_ installation: Installation, limits: RegistrationLimits) async throws -> RegistrationOutcome {
        try await base.save(installation, limits: limits)
    }
    func installation(id: String) async throws -> Installation? { try await base.installation(id: id) }
    func owner(of id: String) async throws -> String? { try await base.owner(of: id) }
    func delete(id: String, owner: String) async throws -> Bool { try await base.delete(id: id, owner: owner) }
    func remove(_ installation: Installation) async throws -> Bool { try await base.remove(installation) }
    func installationIDs(tag: String?, cursor: Int, count: Int) async throws -> (ids: [String], next: Int) {
        try await base.installationIDs(tag: tag, cursor: cursor, count: count)
    }
    func installations(ids: [String]) async throws -> [Installation] { try await base.installations(ids: ids) }
    func installations(owner: String) async throws -> [Installation] { try await base.installations(owner: owner) }
    func installationIDs(owner: String) async throws -> [String] { try await base.installationIDs(owner: owner) }
    func removeAll(owner: String) async throws -> Int { try await base.removeAll(owner: owner) }
}
