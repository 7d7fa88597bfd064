import Hiredis
import Logging
import RichPushCore
import RichPushQueue
import RichPushStorage

/// Gives each app's rich-push jobs to that app's handler: one worker fleet serves every app.
///
/// A read of jobs is split by app, and the apps' shares run at once; the default app's go to ``base``, and
/// another app's to a copy of it over that app's keys (ledger, registry) and adapter (its own
/// credentials, see ``AppAdapters``). Nothing is kept per idle app: the copies are made per read.
struct RichPushJobRouter: BatchJobHandler {
    /// The default app's handler, whose bounds (push budget, fan-out gate) every app shares.
    let base: RichPushJobHandler
    /// The partition's ledger of the default app, whose record cache every app's shares.
    let ledger: RedisDeliveryLedger
    /// The partition's keys (of the default app).
    let keys: StorageKeys
    let redis: any RedisClient
    let adapters: AppAdapters
    /// Each app's ledger and registry over the partition's keys, kept while the app is busy.
    let perApp = PerAppCache<(any DeliveryLedger, any InstallationStore)>()

    /// Registers this router for both rich-push job types.
    func register(in handlers: inout JobHandlers) {
        handlers.register(self, for: RichPushJob.type)
        handlers.register(self, for: RichPushJob.batchType)
    }

    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>] {
        let groups = Self.groups(jobs)
        if groups.count == 1, groups[0].app.isDefault { return await base.handle(batch: jobs) }
        var results = [Result<Void, any Error>](repeating: .success(()), count: jobs.count)
        // The apps' shares at once: each costs its own round trips, which overlap on the
        // connections instead of adding up (the push budget still bounds them together).
        await withTaskGroup(of: (indexes: [Int], outcomes: [Result<Void, any Error>]).self) { group in
            for (app, indexes) in groups {
                group.addTask {
                    do {
                        let handler = try await handler(for: app)
                        return (indexes, await handler.handle(batch: indexes.map { jobs[$0] }))
                    } catch {
                        return (indexes, Array(repeating: .failure(error), count: indexes.count))
                    }
                }
            }
            for await (indexes, outcomes) in group {
                for (index, outcome) in zip(indexes, outcomes) { results[index] = outcome }
            }
        }
        return results
    }

    /// Every app's copy of the handler shares the base's count.
    func takeAccepted(_ job: Job) -> Int { base.takeAccepted(job) }

    func willDeadLetter(_ jobs: [(job: Job, reason: String)]) async throws {
        for (app, indexes) in Self.groups(jobs.map(\.job)) {
            // What a dead letter marks needs the app's keys only, not its credentials.
            try await stores(app).willDeadLetter(indexes.map { jobs[$0] })
        }
    }

    /// The jobs' indexes by app, apps in the order first read; a job whose payload names no app
    /// readably goes with the default app's, whose handler fails it with the reason.
    static func groups(_ jobs: [Job]) -> [(app: AppID, indexes: [Int])] {
        var order: [AppID] = []
        var indexes: [AppID: [Int]] = [:]
        for (index, job) in jobs.enumerated() {
            let app = RichPushJob.scope(of: job)?.app ?? .default
            if indexes[app] == nil { order.append(app) }
            indexes[app, default: []].append(index)
        }
        return order.map { ($0, indexes[$0] ?? []) }
    }

    /// `app`'s handler with its adapter (the app's credentials; a retryable error when they
    /// cannot be had now).
    private func handler(for app: AppID) async throws -> RichPushJobHandler {
        if app.isDefault { return base }
        var handler = stores(app)
        handler.adapter = try await adapters.adapter(for: app)
        return handler
    }

    /// `app`'s handler with the default adapter (enough for what needs no send).
    private func stores(_ app: AppID) -> RichPushJobHandler {
        if app.isDefault { return base }
        let (ledger, installations) = perApp.value(for: app) { [keys, redis, ledger] in
            (ledger.forApp(app), RedisInstallationStore(redis: redis, keys: keys.forApp(app)))
        }
        return base.scoped(to: app, ledger: ledger, installations: installations, adapter: base.adapter)
    }
}
