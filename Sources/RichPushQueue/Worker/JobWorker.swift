import Foundation
public import Hiredis
public import Logging
public import ServiceLifecycle
import Synchronization

/// A worker process's job loop, as a swift-service-lifecycle `Service`.
///
/// It reads batches with `XREADGROUP … BLOCK` on a connection of its own, runs up to
/// `concurrency` jobs at once, acknowledges in batches, retries or dead-letters failures, reclaims
/// jobs abandoned by dead workers, and keeps the leases of its own long jobs. On graceful shutdown
/// (SIGTERM/SIGINT through the ServiceGroup) it stops reading, lets running jobs finish up to the
/// drain timeout, flushes acknowledgements, releases what is left for immediate reclaim, and
/// returns. When Redis goes away it backs off and carries on when Redis is back.
public final class JobWorker: Service, Sendable {
    public let queue: JobQueue
    public let configuration: JobWorkerConfiguration
    private let handlers: JobHandlers
    private let readerConfiguration: RedisConfiguration
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let running = Mutex<[String: ContinuousClock.Instant]>([:])
    private let handled = Atomic<Int>(0)
    private let slots: SlotLimiter
    private let metrics = WorkerMetrics()

    /// `redis` is the reader's connection configuration (its command timeout is raised above the
    /// block time); `queue.redis` serves everything else.
    public init(queue: JobQueue, handlers: JobHandlers, redis: RedisConfiguration, configuration: JobWorkerConfiguration = JobWorkerConfiguration(), logger: Logger = Logger(label: "richpush.worker")) {
        self.queue = queue
        self.handlers = handlers
        self.configuration = configuration
        var reader = redis
        reader.commandTimeout = configuration.blockTime + .seconds(5)
        reader.clientName = reader.clientName.map { "\($0)-reader" } ?? "worker-reader"
        self.readerConfiguration = reader
        self.slots = SlotLimiter(capacity: configuration.concurrency)
        var logger = logger
        logger[metadataKey: "consumer"] = "\(configuration.consumer)"
        self.logger = logger
    }

    /// Jobs this worker finished (acknowledged, retried, dead-lettered or dropped) since it started.
    public var handledCount: Int { handled.load(ordering: .relaxed) }

    /// Asks the loop to stop as a graceful shutdown would (for embedding without a ServiceGroup).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        slots.interrupt()
    }

    public func run() async throws {
        let reader = RedisConnection(configuration: readerConfiguration, logger: logger)
        let acks = AckBuffer(queue: queue, consumer: configuration.consumer, logger: logger)
        logger.info("worker started", metadata: ["stream": "\(queue.configuration.streamKey)", "concurrency": "\(configuration.concurrency)", "handlers": "\(handlers.types.joined(separator: ","))"])
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await acks.run() }
                group.addTask { await self.keepLeases() }
                await fetchLoop(reader: reader) { deliveries in
                    for unit in self.units(of: deliveries) {
                        group.addTask {
                            await self.run(unit, acks: acks)
                            self.slots.release(unit.count)
                        }
                    }
                }
                let released = await drain()
                acks.close()
                // Jobs still running past the drain timeout were released to other workers: stop them.
                if released { group.cancelAll() }
            }
        } onGracefulShutdown: {
            self.stop()
        }
        await reader.close()
        for handler in handlers.all { await handler.shutdown() }
        try? await queue.removeConsumerIfIdle(configuration.consumer)
        logger.info("worker stopped", metadata: ["handled": "\(handledCount)"])
    }

    // MARK: - Fetching

    private var isStopping: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    private func fetchLoop(reader: RedisConnection, submit: ([JobQueue.Delivery]) -> Void) async {
        var backoff = Duration.milliseconds(50)
        var groupReady = false
        var nextMaintenance = ContinuousClock.now
        var nextHousekeeping = ContinuousClock.now + configuration.housekeepingInterval
        while !isStopping {
            let free = await slots.waitForFreeSlots()
            if isStopping { break }
            do {
                if !groupReady {
                    try await queue.ensureGroup()
                    groupReady = true
                }
                var deliveries: [JobQueue.Delivery] = []
                if ContinuousClock.now >= nextMaintenance {
                    nextMaintenance = ContinuousClock.now + configuration.maintenanceInterval
                    try await queue.promoteDueRetries()
                    let reclaimed = try await queue.reclaim(for: configuration.consumer, count: free)
                    if !reclaimed.jobs.isEmpty || reclaimed.deadLettered > 0 {
                        logger.info("reclaimed abandoned jobs", metadata: ["claimed": "\(reclaimed.jobs.count)", "deadLettered": "\(reclaimed.deadLettered)"])
                    }
                    deliveries = reclaimed.jobs
                }
                if ContinuousClock.now >= nextHousekeeping {
                    nextHousekeeping = ContinuousClock.now + configuration.housekeepingInterval
                    try await housekeeping()
                }
                if deliveries.isEmpty {
                    deliveries = try await queue.read(on: reader, consumer: configuration.consumer,
                                                      count: min(free, configuration.batchSize), block: configuration.blockTime)
                }
                slots.take(deliveries.count)
                if !deliveries.isEmpty { submit(deliveries) }
                backoff = .milliseconds(50)
            } catch {
                if let error = error as? RedisError, error.serverErrorPrefix == "NOGROUP" {
                    groupReady = false  // Redis lost the group (restart without persistence): make it again
                }
                logger.warning("fetching jobs failed, backing off", metadata: ["error": "\(error)", "backoff": "\(backoff)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    private func housekeeping() async throws {
        let trimmed = try await queue.trim()
        let removed = try await queue.removeStaleConsumers(idleLongerThan: configuration.staleConsumerAge, except: configuration.consumer)
        if trimmed > 0 || !removed.isEmpty {
            logger.info("housekeeping", metadata: ["trimmed": "\(trimmed)", "removedConsumers": "\(removed.joined(separator: ","))"])
        }
    }

    // MARK: - Running jobs

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
    }

    func units(of deliveries: [JobQueue.Delivery]) -> [Unit] {
        var units: [Unit] = []
        var batches: [String: [Job]] = [:]
        for delivery in deliveries {
            if case .success(let job) = delivery, handlers[job.type] is any BatchJobHandler {
                batches[job.type, default: []].append(job)
            } else {
                units.append(.single(delivery))
            }
        }
        for (type, jobs) in batches {
            guard let handler = handlers[type] as? any BatchJobHandler else { continue }
            units.append(.batch(jobs, handler))
        }
        return units
    }

    private func run(_ unit: Unit, acks: AckBuffer) async {
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
            for (job, result) in zip(jobs, results) {
                await finish(job, result, acks: acks)
            }
        }
    }

    private func process(_ delivery: JobQueue.Delivery, acks: AckBuffer) async {
        let job: Job
        switch delivery {
        case .failure(let error):
            logger.error("dead-lettering an undecodable job", metadata: ["job.id": "\(error.id ?? "?")", "error": "\(error.reason)"])
            if let id = error.id { await settle(id, type: "undecodable", outcome: .deadLettered) { try await self.queue.deadLetter(id: id, error: error.reason) } }
            return
        case .success(let decoded):
            job = decoded
        }
        guard let handler = handlers[job.type] else {
            let known = handlers.types.joined(separator: ", ")
            logger.warning("dead-lettering a job nobody here can run", metadata: ["job.id": "\(job.id)", "job.type": "\(job.type)"])
            await settle(job.id, type: "unknown", outcome: .deadLettered) { try await self.queue.deadLetter(id: job.id, error: "no handler for job type '\(job.type)' (this worker runs: \(known))") }
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
        await finish(job, result, acks: acks)
    }

    private func finish(_ job: Job, _ result: Result<Void, any Error>, acks: AckBuffer) async {
        switch result {
        case .success:
            acks.add(job.id)
            handled.add(1, ordering: .relaxed)
            metrics.count(job.type, .completed)
        case .failure where Task.isCancelled:
            // Cut short by shutdown after the drain timeout: it was released for another worker.
            logger.info("job interrupted by shutdown, left for another worker", metadata: ["job.id": "\(job.id)"])
        case .failure(let error as JobError):
            await fail(job, disposition: error.disposition, message: error.message)
        case .failure(let error):
            await fail(job, disposition: .retry(after: nil), message: "\(error)")
        }
    }

    private func fail(_ job: Job, disposition: JobError.Disposition, message: String) async {
        let attempts = job.attempt + 1
        let metadata: Logger.Metadata = ["job.id": "\(job.id)", "job.origin": "\(job.origin)", "job.type": "\(job.type)", "attempt": "\(attempts)", "error": "\(message)"]
        switch disposition {
        case .retry(let after) where queue.configuration.retry.allowsRetry(afterAttempt: attempts):
            let delay = after ?? queue.configuration.retry.delay(afterAttempt: attempts)
            logger.info("job failed, will retry", metadata: metadata.merging(["delay": "\(delay)"]) { $1 })
            await settle(job.id, type: job.type, outcome: .retried) { try await self.queue.retry(job, after: delay, error: message) }
        case .retry:
            logger.warning("job failed on its last attempt, dead-lettering", metadata: metadata)
            await settle(job.id, type: job.type, outcome: .deadLettered) { try await self.queue.deadLetter(id: job.id, error: "gave up after \(attempts) attempts: \(message)") }
        case .permanent:
            logger.warning("job failed permanently, dead-lettering", metadata: metadata)
            await settle(job.id, type: job.type, outcome: .deadLettered) { try await self.queue.deadLetter(id: job.id, error: message) }
        case .drop:
            logger.info("job failed permanently, dropped", metadata: metadata)
            await settle(job.id, type: job.type, outcome: .dropped) { try await self.queue.countDropped([job.id]) }
        }
    }

    /// Runs a retry/dead-letter/drop step, retrying it while Redis is briefly away; if Redis stays
    /// away, the job stays pending and is reclaimed later, so nothing is lost.
    private func settle(_ id: String, type: String, outcome: WorkerMetrics.Outcome, _ step: @Sendable () async throws -> Void) async {
        var backoff = Duration.milliseconds(50)
        for attempt in 1...8 {
            do {
                try await step()
                handled.add(1, ordering: .relaxed)
                metrics.count(type, outcome)
                return
            } catch let error as RedisError where error.isTransient && attempt < 8 && !isStopping {
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            } catch {
                logger.error("could not settle a failed job; it stays pending and will be reclaimed", metadata: ["job.id": "\(id)", "error": "\(error)"])
                return
            }
        }
    }

    // MARK: - Leases and shutdown

    /// Extends the lease of every job whose lease is older than a quarter of the visibility
    /// timeout, checking every sixth of it: a lease is renewed with more than half of the
    /// timeout to spare, which absorbs scheduling delays on a busy machine.
    private func keepLeases() async {
        let renewAfter = queue.configuration.visibilityTimeout / 4
        let check = min(queue.configuration.visibilityTimeout / 6, .milliseconds(250))
        while !isStopping {
            try? await Task.sleep(for: check)
            let now = ContinuousClock.now
            let due = running.withLock { $0.filter { now - $0.value > renewAfter }.map(\.key) }
            guard !due.isEmpty else { continue }
            do {
                try await queue.extendLease(of: due, consumer: configuration.consumer)
                running.withLock { for id in due where $0[id] != nil { $0[id] = now } }
            } catch {
                logger.warning("could not extend leases", metadata: ["jobs": "\(due.count)", "error": "\(error)"])
            }
        }
    }

    /// Waits for running jobs up to the drain timeout, then releases the rest to other workers.
    private func drain() async -> Bool {
        let deadline = ContinuousClock.now + configuration.drainTimeout
        while slots.busy > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let left = running.withLock { Array($0.keys) }
        guard !left.isEmpty else { return false }
        logger.warning("drain timeout: releasing running jobs for immediate reclaim", metadata: ["jobs": "\(left.count)"])
        try? await queue.release(left, consumer: configuration.consumer)
        return true
    }
}
