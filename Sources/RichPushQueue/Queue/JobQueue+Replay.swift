import Hiredis

/// Replay of jobs from the stream's retained history (stream ids are timestamps).
extension JobQueue {
    /// One job selected for replay.
    package struct ReplayCandidate: Sendable, Hashable {
        package let id: String
        package let type: String
        package let origin: String
    }

    /// Re-enqueues every job whose stream id lies in [from, to] (ids or `<ms>` timestamps) as a
    /// fresh job (attempt 0) keeping its origin id, admitted as a new job is (fair scheduling:
    /// into its app's lane); with `dryRun`, only lists them. Reads and
    /// writes in pipelined pages of 500. Undecodable entries are skipped and counted.
    package func replay(
        from: String, to: String, types: Set<String>? = nil, dryRun: Bool = false,
        where include: @Sendable (Job) -> Bool = { _ in true }
    ) async throws -> (candidates: [ReplayCandidate], skipped: Int) {
        var candidates: [ReplayCandidate] = []
        var skipped = 0
        var start = from
        // Stop at the stream's end as it is now, so the replayed copies are not replayed again.
        let newest = try await redis.send("XREVRANGE", configuration.streamKey, "+", "-", "COUNT", 1).array?.first?.array?.first?.string
        guard let newest else { return ([], 0) }
        let end = StreamID(to).map { $0 < StreamID(newest)! } == true ? to : newest
        while true {
            let page = try await redis.send("XRANGE", configuration.streamKey, start, end, "COUNT", 500).array ?? []
            if page.isEmpty { break }
            var jobs: [Job] = []
            for entry in page {
                switch Self.delivery(entry) {
                case .success(let job) where (types == nil || types!.contains(job.type)) && include(job): jobs.append(job)
                case .success: break
                case .failure: skipped += 1
                }
            }
            if !dryRun && !jobs.isEmpty {
                // Admitted as any job is: under fair scheduling into its app's lane, so a replay
                // of one app's history takes that app's share, and waits while the app is paused.
                let now = Self.nowMilliseconds()
                let admission = QueueScripts.Admission(configuration)
                let commands = jobs.map { job in
                    QueueScripts.enqueue.command(
                        QueueScripts.EnqueueCall(
                            admission: admission, key: "", time: 0,
                            fields: Job.fields(
                                for: JobRequest(type: job.type, payload: job.payload, app: job.app, lane: job.lane), now: now)
                                + ["origin", job.origin, "replayOf", job.id]))
                }
                for reply in try await redis.pipeline(commands, loading: [QueueScripts.enqueue.script]) { _ = try reply.throwingError() }
            }
            candidates += jobs.map { ReplayCandidate(id: $0.id, type: $0.type, origin: $0.origin) }
            guard let last = page.last?.array?.first?.string else { break }
            start = "(" + last
        }
        return (candidates, skipped)
    }
}
