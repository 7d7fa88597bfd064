import Hiredis

extension JobQueue {
    /// Pauses or resumes `app`'s sending in every partition of `queues`, in one pipelined round
    /// trip (docs/queue.md#pausing-an-app); how many partitions changed (0: it already was).
    /// Fair scheduling only: under fifo, jobs go straight into the stream and nothing holds them.
    @discardableResult
    package static func setPaused(_ paused: Bool, app: String, in queues: [JobQueue]) async throws -> Int {
        try await setPaused(paused, apps: [app], in: queues)
    }

    /// As ``setPaused(_:app:in:)`` for several apps at once (the default app's, and the jobs
    /// that name no app, which count as its).
    @discardableResult
    package static func setPaused(_ paused: Bool, apps: [String], in queues: [JobQueue]) async throws -> Int {
        guard let redis = queues.first?.redis else { return 0 }
        let script = paused ? QueueScripts.pause : QueueScripts.resume
        let calls = apps.flatMap { app in
            queues.map {
                QueueScripts.PauseCall(
                    ready: $0.configuration.readyKey, scheduler: $0.configuration.schedulerKey, bell: $0.configuration.bellKey,
                    waitPrefix: $0.configuration.waitPrefix, app: app)
            }
        }
        let replies = try await redis.pipeline(calls.map { script.command($0) }, loading: [script.script])
        return try replies.reduce(0) { $0 + (try $1.throwingError().int ?? 0) }
    }

    /// The apps paused in any partition of `queues` (one pipelined round trip; HGETALL of each
    /// scheduler hash, a few fields per app, as `richpush stats` reads it).
    package static func pausedApps(in queues: [JobQueue]) async throws -> Set<String> {
        guard let redis = queues.first?.redis else { return [] }
        let replies = try await redis.pipeline(queues.map { RedisCommand("HGETALL", $0.configuration.schedulerKey) })
        var paused: Set<String> = []
        for reply in replies {
            let flat = try reply.throwingError().array ?? []
            for index in stride(from: 0, to: flat.count - 1, by: 2) {
                let prefix = SchedulerField.paused.rawValue
                if let name = flat[index].string, name.hasPrefix(prefix) { paused.insert(String(name.dropFirst(prefix.count))) }
            }
        }
        return paused
    }
}
