import Foundation
package import Logging
package import RichPushCore
package import RichPushQueue
package import RichPushStorage

/// Runs rich-push jobs: resolves each notification's target to installations, renders the push
/// once per job, sends through the adapter in batches and records every outcome.
///
/// The worker hands it all the rich-push jobs of one read at once, and the whole batch costs a
/// fixed number of pipelined round trips (load records, scan tags, load installations, claim,
/// send, record), not a number per job. A target larger than `fanOutBatch` installations is
/// split into `rich-push-batch` sub-jobs, so many workers share one fan-out. Each (notification,
/// installation) pair is leased in the notification's delivery ledger before its push and
/// recorded after it, so a redelivered or replayed job skips what was recorded and resends what a
/// dead worker leased but never recorded: at least once to the platform, never lost silently.
package struct RichPushJobHandler: BatchJobHandler {
    package static let type = RichPushJob.type
    package static let batchType = RichPushJob.batchType

    /// The app whose jobs these are (``RichPushJobRouter`` gives each app's jobs to its handler).
    var app: AppID = .default
    var ledger: any DeliveryLedger
    var installations: any InstallationStore
    /// Where fan-out sub-jobs go.
    let queue: any JobEnqueuing
    var adapter: any PushAdapter
    let renderer: PushRenderer
    /// How each platform's pushes are rendered (APNs payload unless said otherwise).
    let formats: [Platform: PushFormat]
    let fanOutBatch: Int
    /// Most pushes one round of a batch holds at once (see ``handle(batch:)``).
    let maxPushesPerRound: Int
    /// The same bound across the batches this handler runs at once.
    let budget: PushBudget
    /// One large audience resolved at a time across those batches (see ``splitLargeAudiences(_:)``).
    let fanOutGate = PushBudget(limit: 1)
    /// Pushes a minute of a notification that sets no throttle of its own (0: none).
    let defaultThrottlePerMinute: Int
    /// How long a pair's lease lasts: longer than a send, shorter than a retry's patience.
    let leaseDuration: Duration
    /// Tokens the providers declared dead, consulted right before each send (nil: not kept,
    /// as for the simulated hub alone).
    let goneTokens: (any GoneTokens)?
    /// Devices a provider asked to be left alone for a while (a 429 naming a token or a
    /// subscription), shared by the fleet, consulted right before each send (nil: not kept).
    let deviceBackOffs: (any DeviceBackOffs)?
    /// The first back-off after a push failed at the provider (a 5xx, no answer); it doubles with
    /// each attempt, so a provider in trouble is not sent the same pushes again at once.
    let providerRetryBase: Duration
    /// Where each batch's failed pushes are counted by reason code for the console (the
    /// partition's queue; nil: not counted). Kept by ``scoped(to:ledger:installations:adapter:)``:
    /// every app's handler of a partition counts into that partition.
    let failedPushes: (any FailedPushCounting)?
    /// How `auto` chooses each device's form (``AutoDelivery``).
    let autoDelivery: AutoDelivery
    /// Signs the media URL each alert carries for its device (nil: the API's fetch path, which
    /// needs the user's credentials).
    let mediaSigner: MediaURLSigner?
    let logger: Logger
    let metrics: PushMetrics
    /// Pushes accepted per job, until the worker takes them for the app's sent total.
    let accepted = AcceptedPushes()

    package init(
        ledger: any DeliveryLedger, installations: any InstallationStore, queue: any JobEnqueuing, adapter: any PushAdapter,
        renderer: PushRenderer, formats: [Platform: PushFormat] = [:], fanOutBatch: Int = 500, defaultThrottlePerMinute: Int = 0,
        leaseDuration: Duration = .seconds(30),
        maxPushesPerRound: Int = 1_000, goneTokens: (any GoneTokens)? = nil, deviceBackOffs: (any DeviceBackOffs)? = nil,
        providerRetryBase: Duration = .seconds(1),
        failedPushes: (any FailedPushCounting)? = nil, autoDelivery: AutoDelivery = AutoDelivery(), mediaSigner: MediaURLSigner? = nil,
        logger: Logger = Logger(label: "richpush.worker")
    ) {
        self.autoDelivery = autoDelivery
        self.mediaSigner = mediaSigner
        self.ledger = ledger
        self.installations = installations
        self.queue = queue
        self.adapter = adapter
        self.renderer = renderer
        self.formats = formats
        self.fanOutBatch = max(1, fanOutBatch)
        self.maxPushesPerRound = max(1, maxPushesPerRound)
        self.budget = PushBudget(limit: self.maxPushesPerRound)
        self.defaultThrottlePerMinute = max(0, defaultThrottlePerMinute)
        self.leaseDuration = leaseDuration
        self.goneTokens = goneTokens
        self.deviceBackOffs = deviceBackOffs
        self.providerRetryBase = providerRetryBase
        self.failedPushes = failedPushes
        self.logger = logger
        self.metrics = PushMetrics(adapter: adapter.name)
    }

    /// The pushes `job`'s run got accepted (counted as the app's sent pushes when it settles).
    package func takeAccepted(_ job: Job) -> Int { accepted.take(job.id) }

    /// Registers this handler for both job types.
    package func register(in handlers: inout JobHandlers) {
        handlers.register(self, for: Self.type)
        handlers.register(self, for: Self.batchType)
    }

    /// This handler for `app`'s jobs: its ledger, registry and adapter, sharing this one's push
    /// budget, fan-out gate and metrics (one worker's bounds hold across all its apps).
    func scoped(
        to app: AppID, ledger: any DeliveryLedger, installations: any InstallationStore, adapter: any PushAdapter
    ) -> RichPushJobHandler {
        var handler = self
        handler.app = app
        handler.ledger = ledger
        handler.installations = installations
        handler.adapter = adapter
        return handler
    }

    /// One job on its way through the batch.
    struct Work {
        let index: Int
        let job: Job
        let id: Int
        /// A sub-job's installations; nil for a rich-push job, whose target is resolved here.
        let explicit: [String]?
        var notification: RichNotification?
        var expression: TagExpression?
        var targets: [String] = []
    }

    package func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        var results = [Result<Void, any Error>](repeating: .success(()), count: jobs.count)
        var work: [Work] = []
        for (index, job) in jobs.enumerated() {
            do {
                work.append(try parse(job, index: index))
            } catch {
                results[index] = .failure(error)
            }
        }
        // Rounds of at most `maxPushesPerRound` pushes, one after another, and no more than that
        // many in all the batches running here at once: reads of many fan-out sub-jobs (each up
        // to `fanOutBatch` installations) would otherwise render and pipeline all of them
        // together, and the worker's memory would grow with the audience.
        for round in Self.rounds(work, maxPushes: maxPushesPerRound) {
            let pushes = round.reduce(0) { $0 + max(1, $1.explicit?.count ?? 1) }
            await budget.acquire(pushes)
            var current = round
            do {
                current = try await load(current, results: &results)
                // Audiences of up to a page resolve together; larger ones one at a time.
                let (ready, large) = try await resolveSmall(current)
                let small = try await splitLargeFanOuts(ready)
                current = small + large  // what a failure below fails for retry
                current = small + (try await splitLargeAudiences(large))
                try await deliver(current, results: &results)
            } catch {
                // Redis or the adapter failed for the whole round: every job still in it is retried.
                for item in current { if case .success = results[item.index] { results[item.index] = .failure(error) } }
            }
            await budget.release(pushes)
        }
        return results
    }

    /// Splits the jobs, in order, into rounds whose pushes stay within `maxPushes`; a job larger
    /// than that is a round of its own. A sub-job weighs its installations. A whole notification
    /// weighs one, since its audience is not known before `resolve`: up to `fanOutBatch` devices
    /// are sent in its round, a larger audience becomes sub-jobs (so a round of many notifications
    /// each to a few hundred devices can hold more than `maxPushes`).
    static func rounds(_ work: [Work], maxPushes: Int) -> [[Work]] {
        var rounds: [[Work]] = []
        var pushes = 0
        for item in work {
            let weight = max(1, item.explicit?.count ?? 1)
            if rounds.isEmpty || pushes + weight > maxPushes && !rounds[rounds.count - 1].isEmpty {
                rounds.append([])
                pushes = 0
            }
            rounds[rounds.count - 1].append(item)
            pushes += weight
        }
        return rounds
    }

    private func parse(_ job: Job, index: Int) throws -> Work {
        let delivery = try RichPushJob.delivery(of: job)
        guard delivery.app == app else { throw JobError.retry("a job of app '\(delivery.app)' reached the handler of app '\(app)'") }
        return Work(index: index, job: job, id: delivery.notification, explicit: delivery.installations)
    }

    /// Loads every record in one round trip; a missing record drops its job, a bad target fails it.
    private func load(_ work: [Work], results: inout [Result<Void, any Error>]) async throws -> [Work] {
        let ids = Array(Set(work.map(\.id)))
        // The records with their state, read fresh for every batch: a fan-out cancelled midway
        // stops at its next batch.
        let (records, cancelled) = try await ledger.notificationsToSend(ids: ids)
        let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return work.compactMap { item -> Work? in
            guard let notification = byID[item.id] else {
                results[item.index] = .failure(JobError.drop("notification \(item.id) no longer exists (expired or never stored)"))
                return nil
            }
            // Cancelled: the job is done, with nothing sent.
            if cancelled.contains(item.id) { return nil }
            do {
                var item = item
                item.notification = notification
                item.expression = try TagExpression(parsing: notification.target)
                return item
            } catch {
                results[item.index] = .failure(JobError.permanent("notification \(item.id) has an invalid target: \(error)"))
                return nil
            }
        }
    }
}
