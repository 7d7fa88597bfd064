import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// The worker's delivery logic on the in-memory store, ledger and adapter: no Redis, no network,
/// milliseconds per test. The same handler runs against Redis in EndToEndTests.
@Suite("Delivery logic, in memory")
struct DeliveryLogicTests {
    struct Unreachable: Error {}

    /// A store with `devices` installations tagged "news", one notification to "news", and a
    /// handler over them.
    struct Setup {
        let notifications = InMemoryNotifications()
        let installations: InMemoryInstallationStore
        let adapter: InMemoryPushAdapter
        let queue = InMemoryJobQueue()
        let handler: RichPushJobHandler
        let id: Int

        init(
            devices: Int = 3, fanOutBatch: Int = 500, lease: Duration = .seconds(30), platforms: [Platform] = [],
            outcome: @escaping @Sendable (OutgoingPush) -> PushOutcome = { .sent(adapterID: "mem-\($0.installation.id)") }
        ) async throws {
            installations = InMemoryInstallationStore(
                (0..<devices).map {
                    Installation(
                        id: "i\($0)", platform: $0 < platforms.count ? platforms[$0] : .apns, handle: "h\($0)", tags: ["news"],
                        owner: "alice", updatedAt: 0)
                })
            adapter = InMemoryPushAdapter(outcome: outcome)
            handler = RichPushJobHandler(
                ledger: notifications, installations: installations, queue: queue, adapter: adapter,
                renderer: PushRenderer(), fanOutBatch: fanOutBatch, leaseDuration: lease)
            id = try await notifications.create(
                NotificationDraft(
                    message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                    creator: "alice", target: "news"), hashing: { _ in "hash" }
            ).id
        }

        func run() async -> Result<Void, any Error> {
            let job = Job(id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, enqueuedAt: 0)
            return await handler.handle(batch: [job])[0]
        }

        func counts() async throws -> [String: Int] { try await notifications.status(id: id)?.counts ?? [:] }
    }

    static func disposition(_ result: Result<Void, any Error>) -> JobError.Disposition? {
        if case .failure(let error) = result { return (error as? JobError)?.disposition ?? .retry(after: nil) }
        return nil
    }

    @Test func eachMatchingDeviceGetsOnePushRecordedInTheLedger() async throws {
        let setup = try await Setup()
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i0", "i1", "i2"])
        #expect(setup.adapter.pushes.allSatisfy { $0.rendered.collapseID == String(setup.id) })
        #expect(try await setup.counts()["sent"] == 3)
        #expect(try await setup.notifications.status(id: setup.id)?.state == .sent)
        // Run again (a redelivery or a replay): nothing is pushed twice.
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.count == 3)
        #expect(try await setup.counts()["duplicateSuppressed"] == 3)
    }

    @Test func anUnreachableAdapterReleasesTheLeasesAndRetries() async throws {
        let setup = try await Setup()
        setup.adapter.failAll(with: Unreachable())
        guard case .retry = Self.disposition(await setup.run()) else { Issue.record("expected a retry"); return }
        #expect(
            setup.notifications.ledgerEntry(DeliveryKey(notification: setup.id, installation: "i0")) == "T",
            "free to lease, still addressed")
        setup.adapter.failAll(with: nil)
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.count == 3)
    }

    @Test func anInvalidTokenRemovesTheDeviceAndIsNotRetried() async throws {
        let setup = try await Setup { push in
            push.installation.id == "i1" ? .invalidToken(reason: "Unregistered") : .sent(adapterID: "x")
        }
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(try await setup.installations.installation(id: "i1") == nil)
        #expect(try await setup.counts()["invalidToken"] == 1)
        #expect(try await setup.counts()["sent"] == 2)
    }

    @Test func aPartialFailureRetriesOnlyThePushesThatFailed() async throws {
        let flaky = FlakyOutcome(failing: "i2")
        let setup = try await Setup(outcome: flaky.outcome)
        guard case .retry = Self.disposition(await setup.run()) else { Issue.record("expected a retry"); return }
        #expect(try await setup.counts()["retried"] == 1)
        flaky.heal()
        #expect(Self.disposition(await setup.run()) == nil)
        // i0 and i1 were recorded: only i2 went out again.
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i0", "i1", "i2", "i2"])
        #expect(try await setup.counts()["sent"] == 3)
    }

    @Test func theAcceptedPushesOfEachJobAreToldOnce() async throws {
        // i0 sent, i1 held (the simulated hub's offline device), i2 failed and retried.
        let setup = try await Setup { push in
            switch push.installation.id {
            case "i0": .sent(adapterID: "x")
            case "i1": .held(adapterID: "y")
            default: .failed(reason: "UNAVAILABLE", retryable: true)
            }
        }
        let job = Job(id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: setup.id).payload, enqueuedAt: 0)
        _ = await setup.handler.handle(batch: [job])
        #expect(setup.handler.takeAccepted(job) == 2)
        #expect(setup.handler.takeAccepted(job) == 0, "told once")
    }

    @Test func aFailureNamesThePlatformsWhosePushesFailed() async throws {
        // i0 apns, i1 fcm, i2 webpush, i3 apns: i1 fails and may be retried, i3 is refused for
        // good (not a failure of the job), the others are sent.
        let platforms: [Platform] = [.apns, .fcm, .webpush, .apns]
        let setup = try await Setup(devices: 4, platforms: platforms) { push in
            switch push.installation.id {
            case "i1": .failed(reason: "UNAVAILABLE", retryable: true)
            case "i3": .failed(reason: "BadDeviceToken", retryable: false)
            default: .sent(adapterID: "x")
            }
        }
        guard case .failure(let error as JobError) = await setup.run() else { Issue.record("expected a JobError"); return }
        #expect(error.platforms == ["fcm"])
        // Nothing reached: every platform of the batch is named.
        let down = try await Setup(devices: 4, platforms: platforms)
        down.adapter.failAll(with: Unreachable())
        guard case .failure(let unreachable as JobError) = await down.run() else { Issue.record("expected a JobError"); return }
        #expect(unreachable.platforms == ["apns", "fcm", "webpush"])
    }

    @Test func aPairLeasedByAWorkerThatDiedIsResentWhenItsLeaseExpires() async throws {
        let setup = try await Setup()
        // A worker leased i0 and died before recording: a live lease makes the job wait for it
        // (long enough that a busy machine cannot see it lapse before the run).
        let key = DeliveryKey(notification: setup.id, installation: "i0")
        setup.notifications.lease(key, owner: "dead", for: .seconds(600))
        guard case .deferred(let after) = Self.disposition(await setup.run()) else { Issue.record("expected a deferral"); return }
        // (On a busy 2-core machine seconds can pass between the lease and the run.)
        #expect(after > .seconds(300) && after <= .seconds(601))
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i1", "i2"])
        // Its lease ran out: the next run sends i0.
        setup.notifications.lease(key, owner: "dead", for: .milliseconds(-1))
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i0", "i1", "i2"])
        #expect(setup.notifications.ledgerEntry(DeliveryKey(notification: setup.id, installation: "i0")) == "R")
    }

    @Test func aLedgerWriteThatFailsFailsTheJobForRetry() async throws {
        let setup = try await Setup(lease: .milliseconds(200))
        setup.notifications.failRecording(with: Unreachable())
        guard case .retry = Self.disposition(await setup.run()) else { Issue.record("expected a retry"); return }
        // Sent but not recorded: the retry resends after the lease (the collapse id keeps the
        // device from showing it twice).
        setup.notifications.failRecording(with: nil)
        try await Task.sleep(for: .milliseconds(250))
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.count == 6)
        #expect(try await setup.counts()["sent"] == 3)
    }

    @Test func aLargeAudienceIsSplitIntoSubJobs() async throws {
        let setup = try await Setup(devices: 5, fanOutBatch: 2)
        #expect(Self.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.isEmpty)
        let shares = try setup.queue.requests.map { request in
            try RichPushJob.delivery(of: Job(id: "x", type: request.type, payload: request.payload, enqueuedAt: 0))
        }
        #expect(shares.map(\.notification) == [setup.id, setup.id, setup.id])
        #expect(shares.compactMap(\.installations).map(\.count) == [2, 2, 1])
        #expect(Set(shares.compactMap(\.installations).flatMap { $0 }) == ["i0", "i1", "i2", "i3", "i4"])
    }

    @Test func aJobNamingMoreInstallationsThanABatchIsSplitToo() async throws {
        let setup = try await Setup(devices: 5, fanOutBatch: 2)
        func named(_ id: String, _ installations: [String]) -> Job {
            let request = RichPushJob.request(notification: setup.id, installations: installations)
            return Job(id: id, type: request.type, payload: request.payload, enqueuedAt: 0)
        }
        let job = named("1-0", ["i4", "i0", "i3", "i1", "i2"])
        let result = await setup.handler.handle(batch: [job])[0]
        #expect(Self.disposition(result) == nil, "\(result)")
        #expect(setup.adapter.pushes.isEmpty, "its sub-jobs send")
        let shares = try setup.queue.requests.map { request in
            try RichPushJob.delivery(of: Job(id: "x", type: request.type, payload: request.payload, enqueuedAt: 0))
        }
        #expect(shares.compactMap(\.installations) == [["i4", "i0"], ["i3", "i1"], ["i2"]])
        // A sub-job, no larger than a batch, is sent as it is.
        #expect(Self.disposition(await setup.handler.handle(batch: [named("2-0", ["i4", "i0"])])[0]) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id).sorted() == ["i0", "i4"] && setup.queue.requests.count == 3)
    }

    @Test func aNotificationThatExpiredIsDropped() async throws {
        let setup = try await Setup()
        let job = Job(id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: 999).payload, enqueuedAt: 0)
        #expect(Self.disposition(await setup.handler.handle(batch: [job])[0]) == .drop)
    }
}

/// Fails the pushes to one installation (retryable) until healed.
final class FlakyOutcome: Sendable {
    private let failing: String
    private let healed = Atomic<Bool>(false)

    init(failing: String) {
        self.failing = failing
    }

    func heal() { healed.store(true, ordering: .relaxed) }

    var outcome: @Sendable (OutgoingPush) -> PushOutcome {
        { [self] push in
            push.installation.id == failing && !healed.load(ordering: .relaxed)
                ? .failed(reason: "try later", retryable: true) : .sent(adapterID: "x")
        }
    }
}

/// The in-memory throttle gate follows the Redis script's rules.
@Suite("Throttle gate in memory")
struct InMemoryThrottleGateTests {
    @Test func admitsUpToTheLimitPerMinute() async throws {
        let ledger = InMemoryNotifications()
        func ask(_ batch: String, _ pushes: Int) async throws -> Duration {
            try await ledger.admitThrottled([ThrottledBatch(notification: 7, batch: batch, pushes: pushes, perMinute: 50)])[0]
        }
        #expect(try await ask("a", 20) == .zero)
        #expect(try await ask("b", 20) == .zero)
        let wait = try await ask("c", 20)
        #expect(wait > .seconds(59) && wait <= .seconds(60))
        #expect(try await ask("a", 20) == .zero)
        #expect(try await ask("d", 10) == .zero)
    }
}
