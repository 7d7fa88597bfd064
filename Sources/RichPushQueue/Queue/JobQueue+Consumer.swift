package import Hiredis

/// The worker's side: read, acknowledge, retry, dead-letter, reclaim, extend and release.
extension JobQueue {
    /// A delivered entry: a decoded job, or a poison message to dead-letter.
    package typealias Delivery = Result<Job, JobDecodingError>

    /// Reads new jobs for `consumer`, waiting up to `block` for the first one (no polling).
    /// `reader` must be a connection of its own whose command timeout exceeds `block`.
    package func read(on reader: RedisConnection, consumer: String, count: Int, block: Duration) async throws -> [Delivery] {
        let reply = try await reader.send(
            "XREADGROUP", "GROUP", configuration.group, consumer, "COUNT", count,
            "BLOCK", max(block.milliseconds, 1), "STREAMS", configuration.streamKey, ">")
        guard let streams = reply.array else { return [] }  // nil: the block time passed
        return streams.flatMap { stream in
            (stream.array?.dropFirst().first?.array ?? []).map(Self.delivery)
        }
    }

    /// Acknowledges finished jobs (by id, with the app whose count in flight each holds) and
    /// counts them (in total and, given a consumer, as `processed:<consumer>` for the per-worker
    /// share), in one script call.
    package func acknowledge(_ jobs: [(id: String, inFlightApp: String?)], consumer: String? = nil) async throws {
        try await acknowledge(jobs.map { ($0.id, $0.inFlightApp, 0) }, counting: "processed", consumer: consumer)
    }

    /// Acknowledges finished jobs with the pushes each got accepted (``JobHandler/takeAccepted(_:)``),
    /// added to its app's total `s:` in the same script (no extra round trip).
    package func acknowledge(accepted jobs: [(id: String, inFlightApp: String?, accepted: Int)], consumer: String? = nil) async throws {
        try await acknowledge(jobs, counting: "processed", consumer: consumer)
    }

    /// Acknowledges jobs that hold no app's count (read in arrival order).
    package func acknowledge(_ ids: [String], consumer: String? = nil) async throws {
        try await acknowledge(ids.map { ($0, nil, 0) }, counting: "processed", consumer: consumer)
    }

    private func acknowledge(
        _ jobs: [(id: String, inFlightApp: String?, accepted: Int)], counting counter: String, consumer: String? = nil
    ) async throws {
        guard !jobs.isEmpty else { return }
        var order: [String] = []
        var ids: [String: [String]] = [:]
        var accepted: [String: Int] = [:]
        for job in jobs {
            let app = job.inFlightApp ?? ""
            if ids[app] == nil { order.append(app) }
            ids[app, default: []].append(job.id)
            accepted[app, default: 0] += job.accepted
        }
        try await redis.run(
            QueueScripts.acknowledge,
            QueueScripts.AckCall(
                stream: configuration.streamKey, counters: configuration.countersKey, scheduler: configuration.schedulerKey,
                group: configuration.group, counter: counter, consumerCounter: consumer.map { "\(counter):\($0)" } ?? "",
                held: order.map { QueueScripts.HeldJobs(app: $0, accepted: accepted[$0] ?? 0, ids: ids[$0] ?? []) }))
    }

    /// Schedules the job to run again after `delay` (delayed set + XACK, atomically); without
    /// `countingAttempt` (a deferral, not a failure) it keeps its attempt number.
    /// `platforms`: those whose pushes failed, kept with it (``Job/failedOn``).
    /// `accepted`: the pushes its run got accepted, added to its app's total `s:`.
    /// `attempt`: the attempt number to keep with it, when its handler counted it (else the
    /// job's own, one more unless it was a deferral).
    package func retry(
        _ job: Job, after delay: Duration, error: String, platforms: [String] = [], accepted: Int = 0, countingAttempt: Bool = true,
        attempt: Int? = nil
    ) async throws {
        try await redis.run(
            QueueScripts.retry,
            QueueScripts.SettleCall(
                stream: configuration.streamKey, target: configuration.delayedKey, counters: configuration.countersKey,
                scheduler: configuration.schedulerKey, group: configuration.group, id: job.id,
                time: Self.nowMilliseconds() + Int64(delay.milliseconds),
                attempt: attempt ?? job.attempt + (countingAttempt ? 1 : 0), error: error,
                platforms: platforms.joined(separator: ","), accepted: accepted))
    }

    /// Copies the entry to the dead letters with its error and acknowledges it, atomically; a job
    /// no longer pending (another worker settled it) is left alone, so it is dead-lettered once.
    package func deadLetter(id: String, error: String, platforms: [String] = []) async throws {
        try await redis.run(
            QueueScripts.deadLetter,
            QueueScripts.SettleCall(
                stream: configuration.streamKey, target: configuration.deadKey, counters: configuration.countersKey,
                scheduler: configuration.schedulerKey, group: configuration.group, id: id, time: Self.nowMilliseconds(), attempt: 0,
                error: error,
                platforms: platforms.joined(separator: ",")))
    }

    /// ``deadLetter(id:error:)`` for each job, in one pipeline (the same script once per job);
    /// how many were dead-lettered (a job no longer pending is left alone, as one at a time).
    @discardableResult
    package func deadLetter(_ jobs: [(id: String, error: String)]) async throws -> Int {
        guard !jobs.isEmpty else { return 0 }
        let now = Self.nowMilliseconds()
        let replies = try await redis.run(
            QueueScripts.deadLetter,
            calls: jobs.map { job in
                QueueScripts.SettleCall(
                    stream: configuration.streamKey, target: configuration.deadKey, counters: configuration.countersKey,
                    scheduler: configuration.schedulerKey, group: configuration.group, id: job.id, time: now, attempt: 0, error: job.error)
            })
        return try replies.reduce(0) { $0 + (try $1.throwingError().int ?? 0) }
    }

    /// Counts jobs whose handler failed for good and were dropped at its request.
    package func countDropped(_ jobs: [(id: String, inFlightApp: String?)]) async throws {
        try await acknowledge(jobs.map { ($0.id, $0.inFlightApp, 0) }, counting: "failed")
    }

    /// Claims for `consumer` the jobs idle longer than the visibility timeout. Poison messages
    /// (delivered `maxDeliveries` times) are claimed too but returned apart, each with its
    /// dead-letter reason: the caller dead-letters them (``deadLetter(id:error:)``) as it does
    /// jobs that failed for good, after their handler's ``JobHandler/willDeadLetter(_:)``.
    package func reclaim(
        for consumer: String, count: Int = 100
    ) async throws -> (jobs: [Delivery], poison: [(delivery: Delivery, reason: String)]) {
        let reply = try await redis.run(
            QueueScripts.reclaim,
            QueueScripts.ReclaimCall(
                stream: configuration.streamKey, group: configuration.group, consumer: consumer,
                minIdle: configuration.visibilityTimeout.milliseconds, count: count,
                maxDeliveries: configuration.maxDeliveries))
        guard let parts = reply.array, parts.count == 4 else {
            throw RedisError(code: .unexpectedReply, message: "reclaim answered \(reply)")
        }
        let entries = (parts[0].array ?? []).filter { !$0.isNull }
        var deliveries: [String: Int] = [:]
        for (id, count) in zip(parts[2].array ?? [], parts[3].array ?? []) {
            if let id = id.string { deliveries[id] = count.int ?? 0 }
        }
        let poison = (parts[1].array ?? []).filter { !$0.isNull }.map { entry in
            let id = entry.array?.first?.string ?? "?"
            return (
                Self.delivery(entry),
                "delivered \(deliveries[id] ?? configuration.maxDeliveries) times without an acknowledgement (poison message or crashing handler)"
            )
        }
        return (entries.map(Self.delivery), poison)
    }

    /// Resets the idle time of jobs still running, so nobody reclaims them (lease extension).
    package func extendLease(of ids: [String], consumer: String) async throws {
        guard !ids.isEmpty else { return }
        var claim = RedisCommand("XCLAIM", configuration.streamKey, configuration.group, consumer, 0)
        for id in ids { claim.append(id) }
        claim.append("JUSTID")
        try await redis.send(claim)
    }

    /// Makes jobs this worker will not finish reclaimable at once (graceful shutdown): their idle
    /// time is set to the visibility timeout, so the next reclaim by any worker takes them.
    package func release(_ ids: [String], consumer: String) async throws {
        guard !ids.isEmpty else { return }
        var claim = RedisCommand("XCLAIM", configuration.streamKey, configuration.group, consumer, 0)
        for id in ids { claim.append(id) }
        claim.append(contentsOf: ["IDLE", configuration.visibilityTimeout.milliseconds + 1, "JUSTID"] as [any RedisArgument])
        try await redis.send(claim)
    }

    /// Admits again the retries and scheduled jobs whose time has come; returns how many.
    @discardableResult
    package func promoteDueRetries(limit: Int = 1000) async throws -> Int {
        try await redis.run(
            QueueScripts.promote,
            QueueScripts.PromoteCall(
                admission: QueueScripts.Admission(configuration), delayed: configuration.delayedKey,
                now: Self.nowMilliseconds(), limit: limit)
        ).int ?? 0
    }

    /// Fair scheduling: moves up to `count` jobs from the ready apps into the stream in fair
    /// order and reads them for `consumer` (with anything else not yet delivered), in one step;
    /// with `read` false only moves them (returns no deliveries). `quantum`: the fewest jobs a
    /// app gives when picked.
    /// `slots` (the worker's job slots) and `running` (its jobs running now, by app) share the
    /// slots by weight among the apps with work; 0 slots: no share kept.
    /// `bulkRoom`: the most bulk-lane jobs (fan-out sub-jobs) to move (nil: no bound), so that a
    /// worker keeps slots for single-device notifications while a fan-out runs.
    package func take(
        for consumer: String, count: Int, quantum: Int = 4, read: Bool = true, slots: Int = 0, running: [String: Int] = [:],
        bulkRoom: Int? = nil
    ) async throws -> [Delivery] {
        let reply = try await redis.run(
            QueueScripts.take,
            QueueScripts.TakeCall(
                stream: configuration.streamKey, ready: configuration.readyKey, scheduler: configuration.schedulerKey,
                bell: configuration.bellKey,
                group: configuration.group, consumer: consumer, count: count, waitPrefix: configuration.waitPrefix,
                quantum: max(quantum, 1), read: read ? 1 : 0,
                slots: slots, bulkRoom: bulkRoom.map { max($0, 0) } ?? -1,
                running: running.filter { $0.value > 0 }.flatMap { [$0.key, $0.value] as [any RedisArgument] }))
        guard let streams = reply.array else { return [] }
        return streams.flatMap { stream in
            (stream.array?.dropFirst().first?.array ?? []).map(Self.delivery)
        }
    }

    /// Waits up to `block` for the bell that says jobs are ready (fair scheduling, with nothing
    /// to take). `reader` must be a connection of its own whose command timeout exceeds `block`.
    /// `consumer`: also wake on that worker's own bell (``ringOwnBell(of:)``).
    package func waitForWork(on reader: RedisConnection, block: Duration, consumer: String? = nil) async throws {
        let seconds = Double(max(block.milliseconds, 1)) / 1000
        if let consumer {
            _ = try await reader.send("BLPOP", configuration.bellKey, ownBellKey(of: consumer), seconds)
        } else {
            _ = try await reader.send("BLPOP", configuration.bellKey, seconds)
        }
    }

    /// Wakes the worker `consumer` if it waits for the bell: it freed slots that the last take
    /// could not fill (a cap, its bulk slots, its share), and jobs may wait for exactly those. A
    /// bell of its own, not the shared one (which would wake any worker, maybe one with no room).
    /// At most one ring waits; an abandoned bell expires in a minute.
    package func ringOwnBell(of consumer: String) async throws {
        let key = ownBellKey(of: consumer)
        for reply in try await redis.pipeline([
            RedisCommand("RPUSH", key, "1"), RedisCommand("LTRIM", key, "0", "0"), RedisCommand("EXPIRE", key, "60"),
        ]) {
            _ = try reply.throwingError()
        }
    }

    /// The worker's own bell, in the partition's hash slot (one `BLPOP` waits on both bells).
    func ownBellKey(of consumer: String) -> String { "\(configuration.bellKey):\(consumer)" }

    static func delivery(_ entry: RedisValue) -> Delivery {
        Result { () throws(JobDecodingError) in try Job(entry: entry) }
    }
}
