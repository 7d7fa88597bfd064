import Hiredis

/// Housekeeping any worker may do at any time; all of it is idempotent.
extension JobQueue {
    /// Trims entries older than the retention, never one still pending or undelivered.
    @discardableResult
    package func trim(now: Int64 = JobQueue.nowMilliseconds()) async throws -> Int {
        let cutoff = max(0, now - Int64(configuration.retention.milliseconds))
        return try await redis.run(QueueScripts.trim, QueueScripts.TrimCall(stream: configuration.streamKey, cutoff: "\(cutoff)-0")).int
            ?? 0
    }

    /// Sets each app's count of jobs in flight to what the stream holds (pending or
    /// undelivered entries taken for it), looking at up to `limit` entries of each kind; returns
    /// how many counts were wrong, or nil when there were more entries than that (nothing changed).
    @discardableResult
    package func recountInFlight(limit: Int = 5000) async throws -> Int? {
        let fixed =
            try await redis.run(
                QueueScripts.recountInFlight,
                QueueScripts.RecountCall(
                    stream: configuration.streamKey, scheduler: configuration.schedulerKey, group: configuration.group, limit: limit)
            ).int ?? 0
        return fixed < 0 ? nil : fixed
    }

    /// Removes consumers that have nothing pending and have been idle longer than `idle`
    /// (workers that exited or died after their jobs were reclaimed); returns their names. Their
    /// `processed` shares, and those of workers that left cleanly longer than `idle` ago, fold
    /// into one `(departed)` share.
    @discardableResult
    package func removeStaleConsumers(idleLongerThan idle: Duration, except keep: String = "") async throws -> [String] {
        try await removeIdleConsumers(minIdle: idle.milliseconds, only: "", except: keep)
    }

    /// Removes one consumer if it has nothing pending (a worker leaving cleanly); its `processed`
    /// share stays visible until the stale sweep folds it.
    package func removeConsumerIfIdle(_ name: String) async throws {
        _ = try await removeIdleConsumers(minIdle: -1, only: name, except: "")
    }

    private func removeIdleConsumers(minIdle: Int, only: String, except: String) async throws -> [String] {
        let reply = try await redis.run(
            QueueScripts.removeIdleConsumers,
            QueueScripts.RemoveConsumersCall(
                stream: configuration.streamKey, counters: configuration.countersKey, group: configuration.group,
                minIdle: minIdle, only: only, keep: except, now: Self.nowMilliseconds()))
        return (reply.array ?? []).compactMap(\.string)
    }
}
