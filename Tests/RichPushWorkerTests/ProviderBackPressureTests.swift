import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// What the worker does when a provider pushes back or declares a token dead, on the in-memory
/// store, ledger and adapter (the same handler runs against Redis and the simulators in
/// EndToEndTests): a deferral spends no attempt and counts nothing, a failure backs off and
/// honours `Retry-After`, a dead token gets nothing more from any job.
@Suite("Provider back-pressure, in memory")
struct ProviderBackPressureTests {
    static let devices = (0..<3).map {
        Installation(id: "i\($0)", platform: .apns, handle: "h\($0)", tags: ["news"], owner: "alice", updatedAt: 1_000)
    }

    struct Setup {
        let notifications: InMemoryNotifications
        let installations: any InstallationStore
        let adapter: InMemoryPushAdapter
        let handler: RichPushJobHandler

        init(
            installations: any InstallationStore = InMemoryInstallationStore(ProviderBackPressureTests.devices),
            notifications: InMemoryNotifications? = nil,
            goneTokens: (any GoneTokens)? = nil, deviceBackOffs: (any DeviceBackOffs)? = nil,
            outcome: @escaping @Sendable (OutgoingPush) -> PushOutcome = { .sent(adapterID: "mem-\($0.installation.id)") }
        ) {
            let notifications = notifications ?? InMemoryNotifications()
            self.notifications = notifications
            self.installations = installations
            adapter = InMemoryPushAdapter(outcome: outcome)
            handler = RichPushJobHandler(
                ledger: notifications, installations: installations, queue: InMemoryJobQueue(), adapter: adapter,
                renderer: PushRenderer(), goneTokens: goneTokens, deviceBackOffs: deviceBackOffs, providerRetryBase: .seconds(1))
        }

        func create(on notifications: InMemoryNotifications? = nil) async throws -> Int {
            try await (notifications ?? self.notifications).create(
                NotificationDraft(
                    message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                    creator: "alice", target: "news"), hashing: { _ in "hash" }
            ).id
        }

        func run(_ id: Int, attempt: Int = 0) async -> JobError.Disposition? {
            await runWithAttempts(id, attempt: attempt).disposition
        }

        /// The disposition and the attempts the handler counted for it (``JobError/attempts``).
        func runWithAttempts(_ id: Int, attempt: Int = 0) async -> (disposition: JobError.Disposition?, attempts: Int?) {
            let job = Job(
                id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, attempt: attempt, enqueuedAt: 0)
            if case .failure(let error) = await handler.handle(batch: [job])[0] {
                guard let error = error as? JobError else { return (.retry(after: nil), nil) }
                return (error.disposition, error.attempts)
            }
            return (nil, nil)
        }
    }

    @Test func aProviderHoldDefersTheJobWithoutAnAttemptAndTheStatusStaysQueued() async throws {
        let setup = Setup { _ in .deferred(reason: "QUOTA_EXCEEDED", after: .seconds(20)) }
        let id = try await setup.create()
        #expect(await setup.run(id) == .deferred(after: .seconds(20)))
        let status = try #require(try await setup.notifications.status(id: id))
        #expect((status.counts["retried"] ?? 0) == 0 && (status.counts["failed"] ?? 0) == 0, "a deferral is no failure: \(status.counts)")
        #expect(status.state == .queued)
        // The leases were given back: the job's return sends at once.
        #expect(setup.notifications.ledgerEntry(DeliveryKey(notification: id, installation: "i0")) == "T")
        let healthy = Setup(notifications: setup.notifications)
        #expect(await healthy.run(id) == nil)
        #expect(try await setup.notifications.status(id: id)?.counts["sent"] == 3)
    }

    @Test func aRetryAfterOnAFailureIsTheLeastBackOff() async throws {
        let setup = Setup { push in
            push.installation.id == "i2" ? .failedRetryAfter(reason: "ServiceUnavailable", after: .seconds(7)) : .sent(adapterID: "x")
        }
        let id = try await setup.create()
        guard case .retry(let after?) = await setup.run(id) else { Issue.record("expected a retry with a delay"); return }
        #expect(after >= .seconds(7), "sent again before the Retry-After: \(after)")
        #expect(try await setup.notifications.status(id: id)?.counts["retried"] == 1)
    }

    @Test func aFailureAtTheProviderBacksOffMoreWithEachAttempt() async throws {
        let setup = Setup { _ in .failed(reason: "InternalServerError", retryable: true) }
        let id = try await setup.create()
        var delays: [Duration] = []
        for attempt in 0..<4 {
            let (disposition, attempts) = await setup.runWithAttempts(id, attempt: attempt)
            guard case .retry(let after?) = disposition else {
                Issue.record("expected a retry with a delay, got \(String(describing: disposition))"); return
            }
            #expect(attempts == attempt + 1, "each push counts its own failures")
            delays.append(after)
        }
        #expect(delays[0] >= .milliseconds(500) && delays[0] <= .seconds(1), "first back-off \(delays[0])")
        #expect(delays[3] >= .seconds(4) && delays[3] <= .seconds(8), "fourth back-off \(delays[3])")
    }

    /// Attempts belong to the push, not to the job: of a job of 32 devices, 31 fail four times
    /// while the 32nd is held back by the provider (429); when the 32nd first fails, on the job's
    /// fifth run, the job has spent one attempt of it and is retried, not dead-lettered (with a
    /// count per job it would have been its fifth failure: dead-lettered with a limit of 5).
    @Test func aPushThatFailedOnceIsNotDeadLetteredForItsNeighboursFailures() async throws {
        let devices = (0..<32).map {
            Installation(id: "d\($0)", platform: .apns, handle: "t\($0)", tags: ["news"], owner: "alice", updatedAt: 1_000)
        }
        let round = Mutex(1)
        let setup = Setup(installations: InMemoryInstallationStore(devices)) { push in
            let current = round.withLock { $0 }
            if push.installation.id == "d31" {
                return current < 5
                    ? .deferred(reason: "TooManyRequests", after: .seconds(1)) : .failed(reason: "InternalServerError", retryable: true)
            }
            return current < 5 ? .failed(reason: "InternalServerError", retryable: true) : .sent(adapterID: "x")
        }
        let id = try await setup.create()
        var jobAttempt = 0
        for run in 1...4 {
            round.withLock { $0 = run }
            let (disposition, attempts) = await setup.runWithAttempts(id, attempt: jobAttempt)
            guard case .retry = disposition else {
                Issue.record("run \(run): expected a retry, got \(String(describing: disposition))"); return
            }
            #expect(attempts == 0, "run \(run): a push deferred in the run spent no attempt, so the job may not be dead-lettered")
            jobAttempt = attempts ?? jobAttempt + 1
        }
        round.withLock { $0 = 5 }
        let (fifth, attempts) = await setup.runWithAttempts(id, attempt: jobAttempt)
        guard case .retry = fifth else { Issue.record("expected a retry, got \(String(describing: fifth))"); return }
        #expect(attempts == 1, "d31 failed once: the job has spent one attempt of it")
        #expect(RetryPolicy(maxAttempts: 5).allowsRetry(afterAttempt: attempts ?? 99))
        let status = try #require(try await setup.notifications.status(id: id))
        #expect(status.counts["sent"] == 31, "\(status.counts)")

        // Its own failures do spend its attempts: the fifth is its last.
        for run in 6...9 {
            round.withLock { $0 = run }
            let (disposition, counted) = await setup.runWithAttempts(id, attempt: jobAttempt)
            guard case .retry = disposition else {
                Issue.record("run \(run): expected a retry, got \(String(describing: disposition))"); return
            }
            #expect(counted == run - 4)
            jobAttempt = counted ?? jobAttempt + 1
        }
        #expect(!RetryPolicy(maxAttempts: 5).allowsRetry(afterAttempt: jobAttempt))
        #expect(
            setup.adapter.pushes.filter { $0.installation.id == "d31" }.count == 9, "sent in every run: deferred four times, failed five")
    }

    /// A provider asked to slow down for h1 (a 429 naming its token or subscription) for 2
    /// minutes: another worker's job of the next notification sends nothing to h1, only to the
    /// others, and is deferred for the time left (no attempt spent); a worker without the fleet's
    /// record would have sent it (the control).
    @Test func aDeviceAskedToSlowDownGetsNoPushOfAnotherNotificationUntilTheTime() async throws {
        let backOffs = InMemoryDeviceBackOffs()
        let notifications = InMemoryNotifications()
        let first = Setup(notifications: notifications, deviceBackOffs: backOffs) { push in
            push.installation.handle == "h1" ? .deviceDeferred(reason: "429", after: .seconds(120)) : .sent(adapterID: "x")
        }
        let a = try await first.create()
        guard case .deferred(let after) = await first.run(a) else { Issue.record("expected the job deferred"); return }
        #expect(after >= .seconds(100), "deferred for the provider's wait: \(after)")
        #expect(try await notifications.status(id: a)?.counts["sent"] == 2)

        let second = Setup(notifications: notifications, deviceBackOffs: backOffs)
        let b = try await second.create()
        guard case .deferred(let left) = await second.run(b) else { Issue.record("expected the job deferred"); return }
        #expect(left > .seconds(60) && left <= .seconds(121), "until the device's hold ends: \(left)")
        #expect(second.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h2"], "no request to h1")
        let status = try #require(try await notifications.status(id: b))
        #expect(
            status.counts["sent"] == 2 && (status.counts["failed"] ?? 0) == 0 && (status.counts["retried"] ?? 0) == 0, "\(status.counts)")

        let control = Setup(notifications: notifications)
        #expect(await control.run(try await control.create()) == nil)
        #expect(control.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h1", "h2"])
    }

    /// Another worker's round is talking to h1 (it claimed the device): this job sends nothing to
    /// h1 and comes back shortly, spending no attempt, while the others get theirs; that round's
    /// answer asked for two minutes, written as it released h1: the job then waits for the hold.
    /// Its own claims are released when it records.
    @Test func aDeviceAnotherRoundIsTalkingToWaitsForThatRoundsAnswer() async throws {
        let backOffs = InMemoryDeviceBackOffs()
        let setup = Setup(deviceBackOffs: backOffs)
        let now = JobQueue.nowMilliseconds()
        #expect(try await backOffs.claim(["apns:h1"], owner: "other", now: now, until: now + 60_000).isEmpty)
        let id = try await setup.create()
        let (disposition, attempts) = await setup.runWithAttempts(id)
        guard case .deferred(let after) = disposition else {
            Issue.record("expected the job deferred, got \(String(describing: disposition))"); return
        }
        #expect(after >= .milliseconds(250) && after <= .seconds(1), "back soon: \(after)")
        #expect(attempts == nil || attempts == 0)
        #expect(setup.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h2"], "no request to h1 while another is in flight")
        #expect(
            try await backOffs.claim(["apns:h0", "apns:h2"], owner: "third", now: JobQueue.nowMilliseconds(), until: now + 60_000).isEmpty,
            "the round released its own claims")

        try await backOffs.release(["apns:h1"], owner: "other", holding: ["apns:h1": now + 120_000], now: now)
        guard case .deferred(let left) = await setup.run(id) else { Issue.record("expected the job deferred"); return }
        #expect(left > .seconds(60) && left <= .seconds(121), "until the device's hold ends: \(left)")
        #expect(setup.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h2"])
        let status = try #require(try await setup.notifications.status(id: id))
        #expect(
            status.counts["sent"] == 2 && (status.counts["failed"] ?? 0) == 0 && (status.counts["retried"] ?? 0) == 0, "\(status.counts)")
    }

    /// A round that holds two notifications for the same devices writes one request to a device
    /// at a time: the second notification's pushes go out in a second adapter call, after the
    /// first's answers, and each device gets both, in order.
    @Test func aRoundSendsOneRequestToADeviceAtATime() async throws {
        let setup = Setup()
        let ids = [try await setup.create(), try await setup.create()]
        let jobs = ids.enumerated().map { offset, id in
            Job(
                id: "\(offset + 1)-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, attempt: 0,
                enqueuedAt: 0)
        }
        let results = await setup.handler.handle(batch: jobs)
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } }, "\(results)")
        #expect(setup.adapter.sendSizes == [3, 3], "two waves of one push per device: \(setup.adapter.sendSizes)")
        let pushes = setup.adapter.pushes
        #expect(Set(pushes.prefix(3).map(\.installation.handle)).count == 3 && Set(pushes.suffix(3).map(\.installation.handle)).count == 3)
        for handle in ["h0", "h1", "h2"] {
            #expect(pushes.filter { $0.installation.handle == handle }.map(\.notification).count == 2)
        }
    }

    /// The provider becomes unreachable between the two waves of a round: the first wave's
    /// pushes stay sent (recorded, never sent again), the second wave's are failures to retry,
    /// and the retry sends exactly those.
    @Test func aProviderLostBetweenWavesRetriesOnlyTheLaterWave() async throws {
        let adapter = FailingFromCall(2)
        let notifications = InMemoryNotifications()
        let handler = RichPushJobHandler(
            ledger: notifications, installations: InMemoryInstallationStore(Self.devices), queue: InMemoryJobQueue(), adapter: adapter,
            renderer: PushRenderer(), providerRetryBase: .seconds(1))
        let setup = Setup(notifications: notifications)
        let ids = [try await setup.create(), try await setup.create()]
        let jobs = ids.enumerated().map { offset, id in
            Job(
                id: "\(offset + 1)-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, attempt: 0,
                enqueuedAt: 0)
        }
        let results = await handler.handle(batch: jobs)
        let first = try #require(try await notifications.status(id: ids[0]))
        let second = try #require(try await notifications.status(id: ids[1]))
        #expect(
            first.counts["sent"] == 3 && (second.counts["sent"] ?? 0) == 0 && second.counts["retried"] == 3,
            "\(first.counts) \(second.counts)")
        #expect(results.count == 2)
        if case .success = results[0] {} else { Issue.record("the first notification's job is done: \(results[0])") }
        guard case .failure(let error as JobError) = results[1], case .retry = error.disposition else {
            Issue.record("the second notification's job is retried: \(results[1])")
            return
        }
        adapter.recover()
        #expect(await handler.handle(batch: [jobs[1]]).allSatisfy { if case .success = $0 { true } else { false } })
        #expect(adapter.sent.map(\.notification).filter { $0 == ids[0] }.count == 3, "the first wave went out once")
        #expect(adapter.sent.map(\.notification).filter { $0 == ids[1] }.count == 3)
        #expect(try await notifications.status(id: ids[1])?.counts["sent"] == 3)
    }

    /// APNs answered 410 for h1 while another job to it was under way, its device already
    /// resolved: that job sends nothing to h1. A handler without the dead-token set would (the
    /// control), and a registration newer than the 410 revives the token.
    @Test func aTokenDeclaredDeadGetsNothingFromAJobThatResolvedItBefore() async throws {
        let gone = InMemoryGoneTokens()
        let live = InMemoryInstallationStore(Self.devices)
        let notifications = InMemoryNotifications()
        let first = Setup(installations: live, notifications: notifications, goneTokens: gone) { push in
            push.installation.handle == "h1" ? .invalidToken(reason: "Unregistered") : .sent(adapterID: "x")
        }
        // The other job resolved its devices before the 410: it still sees h1's installation.
        let stale = StaleInstallations(snapshot: Self.devices, live: live)
        let second = Setup(installations: stale, notifications: notifications, goneTokens: gone)
        let control = Setup(installations: stale, notifications: notifications)
        let (a, b, c) = (
            try await first.create(on: notifications), try await first.create(on: notifications), try await first.create(on: notifications)
        )
        #expect(await first.run(a) == nil)
        #expect(try await live.installation(id: "i1") == nil, "the 410 removed the installation")
        #expect(await second.run(b) == nil)
        #expect(second.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h2"])
        #expect(try await notifications.status(id: b)?.counts["invalidToken"] == 1)
        #expect(await control.run(c) == nil)
        #expect(
            control.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h1", "h2"],
            "without the set, the stale job pushes to the dead token")

        // The device registers again with the same token, after the 410: it is alive again.
        let revived = StaleInstallations(
            snapshot: Self.devices.map {
                var device = $0; device.updatedAt = Int64.max / 2; return device
            }, live: live)
        let third = Setup(installations: revived, notifications: notifications, goneTokens: gone)
        #expect(await third.run(try await first.create(on: notifications)) == nil)
        #expect(third.adapter.pushes.map(\.installation.handle).sorted() == ["h0", "h1", "h2"])
    }
}

/// Installations as a job saw them when it resolved its devices (`snapshot`), whatever happened
/// since; the tag index and writes go to `live`.
final class StaleInstallations: InstallationStore {
    let snapshot: [Installation]
    let live: InMemoryInstallationStore

    init(snapshot: [Installation], live: InMemoryInstallationStore) {
        self.snapshot = snapshot
        self.live = live
    }

    func installations(ids: [String]) async throws -> [Installation] { snapshot.filter { ids.contains($0.id) } }
    func installationIDs(byHandles groups: [[String]]) async throws -> [[String]] { try await live.installationIDs(byHandles: groups) }
    func installationIDs(tags: [String?], pageSize: Int) async throws -> [[String]] { tags.map { _ in snapshot.map(\.id) } }
    func firstInstallationIDs(tags: [String?], pageSize: Int) async throws -> [(ids: [String], complete: Bool)] {
        tags.map { _ in (snapshot.map(\.id), true) }
    }
    func installationIDs(tag: String?, cursor: Int, count: Int) async throws -> (ids: [String], next: Int) { (snapshot.map(\.id), 0) }
    func registrationID(forHandle handle: String?, owner: String) async throws -> String {
        try await live.registrationID(forHandle: handle, owner: owner)
    }
    func save(_ installation: Installation, limits: RegistrationLimits) async throws -> RegistrationOutcome {
        try await live.save(installation, limits: limits)
    }
    func installation(id: String) async throws -> Installation? { try await live.installation(id: id) }
    func owner(of id: String) async throws -> String? { try await live.owner(of: id) }
    func delete(id: String, owner: String) async throws -> Bool { try await live.delete(id: id, owner: owner) }
    func remove(_ installation: Installation) async throws -> Bool { try await live.remove(installation) }
    func installations(owner: String) async throws -> [Installation] { try await live.installations(owner: owner) }
    func installationIDs(owner: String) async throws -> [String] { try await live.installationIDs(owner: owner) }
    func removeAll(owner: String) async throws -> Int { try await live.removeAll(owner: owner) }
}

/// An adapter that sends until its `failing`-th call, and throws from then on until it recovers.
final class FailingFromCall: PushAdapter {
    let name = "failing"
    private let failing: Int
    private let state = Mutex<(calls: Int, recovered: Bool, sent: [OutgoingPush])>((0, false, []))

    init(_ failing: Int) {
        self.failing = failing
    }

    var sent: [OutgoingPush] { state.withLock { $0.sent } }

    func recover() {
        state.withLock { $0.recovered = true }
    }

    func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        let fails = state.withLock { state in
            state.calls += 1
            if state.calls >= failing && !state.recovered { return true }
            state.sent += pushes
            return false
        }
        if fails { throw FailingFromCallError() }
        return pushes.map { .sent(adapterID: "x-\($0.installation.id)") }
    }
}

struct FailingFromCallError: Error {}
