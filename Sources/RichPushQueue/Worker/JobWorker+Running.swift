import Hiredis
import Logging

/// Running what the fetch loop read: a job on its own or a batch for a ``BatchJobHandler``,
/// then acknowledging, retrying, dead-lettering (``deadLetter(_:handler:)``, once per unit) or
/// dropping each job by its result.
extension JobWorker {
    /// What one task runs: a job on its own, or the jobs of one read that a batch handler takes together.
    enum Unit {
        case single(JobQueue.Delivery)
        case batch([Job], any BatchJobHandler)

        var count: Int {
            switch self {
            case .single: 1
            case .batch(let jobs, _): jobs.count
            }
        }

        /// Its bulk-lane jobs (fan-out sub-jobs).
        var bulk: Int {
            switch self {
            case .single(.success(let job)): job.lane == .bulk ? 1 : 0
            case .single(.failure): 0
            case .batch(let jobs, _): jobs.count { $0.lane == .bulk }
            }
        }

        /// Its jobs by app (an undecodable entry counts for none).
        var apps: [String: Int] {
            switch self {
            case .single(.success(let job)): [job.app ?? JobRequest.sharedApp: 1]
            case .single(.failure): [:]
            case .batch(let jobs, _): jobs.reduce(into: [:]) { $0[$1.app ?? JobRequest.sharedApp, default: 0] += 1 }
            }
        }
    }

    /// A batch handler's jobs of one read are one unit per type and app: one app's slow jobs
    /// (its provider answers late) neither hold another's acknowledgements nor its slots.
    /// `limit`: the most jobs in one unit (nil: no limit). Under fair scheduling, while several
    /// apps share the worker, every app's units are of the same size (``unitLimit(for:running:)``).
    func units(of deliveries: [JobQueue.Delivery], limit: Int? = nil) -> [Unit] {
        struct Batch: Hashable {
            let type: String, app: String?
        }
        var units: [Unit] = []
        var order: [Batch] = []
        var batches: [Batch: [Job]] = [:]
        for delivery in deliveries {
            if case .success(let job) = delivery, handlers[job.type] is any BatchJobHandler {
                let batch = Batch(type: job.type, app: job.app)
                if batches[batch] == nil { order.append(batch) }
                batches[batch, default: []].append(job)
            } else {
                units.append(.single(delivery))
            }
        }
        for batch in order {
            guard let handler = handlers[batch.type] as? any BatchJobHandler, let jobs = batches[batch] else { continue }
            let size = max(limit ?? jobs.count, 1)
            for start in stride(from: 0, to: jobs.count, by: size) {
                units.append(.batch(Array(jobs[start..<min(start + size, jobs.count)]), handler))
            }
        }
        return units
    }

    /// The most jobs in one batch unit for this read: ``JobWorkerConfiguration/fairUnitSize``
    /// under fair scheduling while more than one app has jobs here (in the read or running),
    /// else none. A worker frees a unit's slots when its last job ends, and each unit costs the
    /// same few round trips whatever its size: with one app's share in units three times the
    /// size of another's, the first's jobs each held their slots longer, and weights of 3:1 gave
    /// shares of 2.5:1 (docs/load-tests.md). Units of one size make a slot's time per job the same
    /// for every app; an app alone keeps whole reads as units (the fewest round trips).
    func unitLimit(for deliveries: [JobQueue.Delivery], running: [String: Int]) -> Int? {
        guard queue.configuration.scheduling == .fair, configuration.fairUnitSize > 0 else { return nil }
        var apps = Set(running.keys)
        for case .success(let job) in deliveries {
            apps.insert(job.app ?? JobRequest.sharedApp)
            if apps.count > 1 { return configuration.fairUnitSize }
        }
        return apps.count > 1 ? configuration.fairUnitSize : nil
    }

    func run(_ unit: Unit, acks: AckBuffer) async {
        switch unit {
        case .single(let delivery):
            await process(delivery, acks: acks)
        case .batch(let jobs, let handler):
            let started = ContinuousClock.now
            running.withLock { for job in jobs { $0[job.id] = started } }
            defer { running.withLock { for job in jobs { _ = $0.removeValue(forKey: job.id) } } }
            metrics.started(jobs)
            let results = await handler.handle(batch: jobs)
            metrics.finished(jobs.count, type: jobs[0].type, after: ContinuousClock.now - started)
            var dead: [(job: Job, reason: String, platforms: [String])] = []
            for (job, result) in zip(jobs, results) {
                if let (reason, platforms) = await finish(job, result, acks: acks, accepted: handler.takeAccepted(job)) {
                    dead.append((job, reason, platforms))
                }
            }
            await deadLetter(dead, handler: handler)
        }
    }

    private func process(_ delivery: JobQueue.Delivery, acks: AckBuffer) async {
        let job: Job
        switch delivery {
        case .failure(let error):
            logger.error("dead-lettering an undecodable job", metadata: ["job.id": "\(error.id ?? "?")", "error": "\(error.reason)"])
            if let id = error.id {
                await settle(id, type: "undecodable", outcome: .deadLettered) {
                    try await self.queue.deadLetter(id: id, error: error.reason)
                }
            }
            return
        case .success(let decoded):
            job = decoded
        }
        guard let handler = handlers[job.type] else {
            let known = handlers.types.joined(separator: ", ")
            logger.warning("dead-lettering a job nobody here can run", metadata: ["job.id": "\(job.id)", "job.type": "\(job.type)"])
            await settle(job.id, type: "unknown", outcome: .deadLettered) {
                try await self.queue.deadLetter(id: job.id, error: "no handler for job type '\(job.type)' (this worker runs: \(known))")
            }
            return
        }
        let started = ContinuousClock.now
        running.withLock { $0[job.id] = started }
        defer { running.withLock { _ = $0.removeValue(forKey: job.id) } }
        metrics.started([job])
        let result: Result<Void, any Error>
        do {
            try await handler.handle(job)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        metrics.finished(1, type: job.type, after: ContinuousClock.now - started)
        if let (reason, platforms) = await finish(job, result, acks: acks, accepted: handler.takeAccepted(job)) {
            await deadLetter([(job, reason, platforms)], handler: handler)
        }
    }

    /// Acknowledges, retries or drops the job by its result; a job that failed for good is not
    /// settled here: its dead-letter reason (and the platforms that failed) is returned, for
    /// ``deadLetter(_:handler:)``.
    /// `accepted`: the pushes its run got accepted (``JobHandler/takeAccepted(_:)``), added to its
    /// app's total when it is acknowledged or sent back to retry (not when it is dead-lettered).
    private func finish(_ job: Job, _ result: Result<Void, any Error>, acks: AckBuffer, accepted: Int = 0) async -> (String, [String])? {
        switch result {
        case .success:
            acks.add(job, accepted: accepted)
            handled.add(1, ordering: .relaxed)
            metrics.count(job.type, .completed)
            metrics.countDone(app: job.app)
        case .failure where Task.isCancelled:
            // Cut short by shutdown after the drain timeout: it was released for another worker.
            logger.info("job interrupted by shutdown, left for another worker", metadata: ["job.id": "\(job.id)"])
        case .failure(let error as JobError):
            return await fail(
                job, disposition: error.disposition, message: error.message, platforms: error.platforms, attempts: error.attempts,
                accepted: accepted)
        case .failure(let error):
            return await fail(job, disposition: .retry(after: nil), message: "\(error)", platforms: [], attempts: nil, accepted: accepted)
        }
        return nil
    }

    /// Settles a failed job by its disposition, or returns its dead-letter reason.
    private func fail(
        _ job: Job, disposition: JobError.Disposition, message: String, platforms: [String], attempts counted: Int?,
        accepted: Int
    ) async -> (String, [String])? {
        let attempts = counted ?? job.attempt + 1
        let metadata: Logger.Metadata = [
            "job.id": "\(job.id)", "job.origin": "\(job.origin)", "job.type": "\(job.type)", "attempt": "\(attempts)",
            "error": "\(message)",
        ]
        switch disposition {
        case .retry(let after) where queue.configuration.retry.allowsRetry(afterAttempt: attempts):
            let delay = after ?? queue.configuration.retry.delay(afterAttempt: attempts)
            logger.info("job failed, will retry", metadata: metadata.merging(["delay": "\(delay)"]) { $1 })
            await settle(job.id, type: job.type, outcome: .retried) {
                try await self.queue.retry(job, after: delay, error: message, platforms: platforms, accepted: accepted, attempt: attempts)
            }
        case .retry:
            logger.warning("job failed on its last attempt, dead-lettering", metadata: metadata)
            return ("gave up after \(attempts) attempts: \(message)", platforms)
        case .permanent:
            logger.warning("job failed permanently, dead-lettering", metadata: metadata)
            return (message, platforms)
        case .deferred(let after):
            logger.debug("job deferred", metadata: metadata.merging(["delay": "\(after)"]) { $1 })
            await settle(job.id, type: job.type, outcome: .retried) {
                try await self.queue.retry(
                    job, after: after, error: message, platforms: platforms, accepted: accepted, countingAttempt: false)
            }
        case .drop:
            logger.info("job failed permanently, dropped", metadata: metadata)
            await settle(job.id, type: job.type, outcome: .dropped) { try await self.queue.countDropped([(job.id, job.inFlightApp)]) }
        }
        return nil
    }

    /// Runs a retry/dead-letter/drop step, retrying it while Redis is briefly away; if Redis stays
    /// away, the job stays pending and is reclaimed later, so nothing is lost.
    func settle(_ id: String, type: String, outcome: WorkerMetrics.Outcome, _ step: @Sendable () async throws -> Void) async {
        do {
            try await retryingTransient(step)
            handled.add(1, ordering: .relaxed)
            metrics.count(type, outcome)
        } catch {
            logger.error(
                "could not settle a failed job; it stays pending and will be reclaimed", metadata: ["job.id": "\(id)", "error": "\(error)"])
        }
    }

    /// Runs `step`, again with a growing back-off while Redis is briefly away (a transient error,
    /// up to 8 tries, none once the worker is stopping); rethrows what it threw last.
    func retryingTransient(_ step: () async throws -> Void) async throws {
        var backoff = Duration.milliseconds(50)
        var attempt = 1
        while true {
            do {
                return try await step()
            } catch let error as RedisError where error.isTransient && attempt < 8 && !isStopping {
                attempt += 1
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }
}
