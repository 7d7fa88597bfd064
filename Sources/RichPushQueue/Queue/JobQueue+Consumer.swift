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

    /// Acknowledges finished jobs with one multi-id XACK and counts them (in total and, given a
    /// consumer, as `processed:<consumer>` for the per-worker share), in one round trip.
    package func acknowledge(_ ids: [String], consumer: String? = nil) async throws {
        try await acknowledge(ids, counting: "processed", consumer: consumer)
    }

    private func acknowledge(_ ids: [String], counting counter: String, consumer: String? = nil) async throws {
        guard !ids.isEmpty else { return }
        var ack = RedisCommand("XACK", configuration.streamKey, configuration.group)
        for id in ids { ack.append(id) }
        var commands = [ack, RedisCommand("HINCRBY", configuration.countersKey, counter, ids.count)]
        if let consumer { commands.append(RedisCommand("HINCRBY", configuration.countersKey, "\(counter):\(consumer)", ids.count)) }
        try await redis.sendAll(commands)
    }

    /// Schedules the job to run again after `delay` (delayed set + XACK, atomically); without
    /// `countingAttempt` (a deferral, not a failure) it keeps its attempt number.
    package func retry(_ job: Job, after delay: Duration, error: String, countingAttempt: Bool = true) async throws {
        try await redis.run(QueueScripts.retry, QueueScripts.SettleCall(stream: configuration.streamKey, target: configuration.delayedKey, counters: configuration.countersKey,
                                                                        group: configuration.group, id: job.id, time: Self.nowMilliseconds() + Int64(delay.milliseconds),
                                                                        attempt: job.attempt + (countingAttempt ? 1 : 0), error: error))
    }

    /// Copies the entry to the dead letters with its error and acknowledges it, atomically; a job
    /// no longer pending (another worker settled it) is left alone, so it is dead-lettered once.
    package func deadLetter(id: String, error: String) async throws {
        try await redis.run(QueueScripts.deadLetter, QueueScripts.SettleCall(stream: configuration.streamKey, target: configuration.deadKey, counters: configuration.countersKey,
                                                                             group: configuration.group, id: id, time: Self.nowMilliseconds(), attempt: 0, error: error))
    }

    /// Counts jobs whose handler failed for good and were dropped at its request.
    package func countDropped(_ ids: [String]) async throws {
        try await acknowledge(ids, counting: "failed")
    }

    /// Claims for `consumer` the jobs idle longer than the visibility timeout. Poison messages
    /// (delivered `maxDeliveries` times) are claimed too but returned apart, each with its
    /// dead-letter reason: the caller dead-letters them (``deadLetter(id:error:)``) as it does
    /// jobs that failed for good, after their handler's ``JobHandler/willDeadLetter(_:)``.
    package func reclaim(for consumer: String, count: Int = 100) async throws -> (jobs: [Delivery], poison: [(delivery: Delivery, reason: String)]) {
        let reply = try await redis.run(QueueScripts.reclaim, QueueScripts.ReclaimCall(stream: configuration.streamKey, group: configuration.group, consumer: consumer,
                                                                                       minIdle: configuration.visibilityTimeout.milliseconds, count: count,
                                                                                       maxDeliveries: configuration.maxDeliveries))
        guard let parts = reply.array, parts.count == 4 else { throw RedisError(code: .unexpectedReply, message: "reclaim answered \(reply)") }
        let entries = (parts[0].array ?? []).filter { !$0.isNull }
        var deliveries: [String: Int] = [:]
        for (id, count) in zip(parts[2].array ?? [], parts[3].array ?? []) {
            if let id = id.string { deliveries[id] = count.int ?? 0 }
        }
        let poison = (parts[1].array ?? []).filter { !$0.isNull }.map { entry in
            let id = entry.array?.first?.string ?? "?"
            return (Self.delivery(entry), "delivered \(deliveries[id] ?? configuration.maxDeliveries) times without an acknowledgement (poison message or crashing handler)")
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

    /// Moves retries whose time has come back into the stream; returns how many.
    @discardableResult
    package func promoteDueRetries(limit: Int = 1000) async throws -> Int {
        try await redis.run(QueueScripts.promote, QueueScripts.PromoteCall(stream: configuration.streamKey, delayed: configuration.delayedKey,
                                                                           now: Self.nowMilliseconds(), limit: limit)).int ?? 0
    }

    static func delivery(_ entry: RedisValue) -> Delivery {
        Result { () throws(JobDecodingError) in try Job(entry: entry) }
    }
}
