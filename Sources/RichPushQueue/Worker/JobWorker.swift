import Foundation
package import Hiredis
package import Logging
import ServiceLifecycle
import Synchronization

/// A worker process's job loop, as a swift-service-lifecycle `Service`.
///
/// It reads batches with `XREADGROUP … BLOCK` on a connection of its own, runs up to
/// `concurrency` jobs at once, acknowledges in batches, retries or dead-letters failures, reclaims
/// jobs abandoned by dead workers, and keeps the leases of its own long jobs. On graceful shutdown
/// (SIGTERM/SIGINT through the ServiceGroup) it stops reading, lets running jobs finish up to the
/// drain timeout, flushes acknowledgements, releases what is left for immediate reclaim, and
/// returns. When Redis goes away it backs off and carries on when Redis is back.
package final class JobWorker: Service, Sendable {
    package let queue: JobQueue
    package let configuration: JobWorkerConfiguration
    let handlers: JobHandlers
    private let locator: RedisNodeLocator
    let logger: Logger
    private let stopping = Atomic<Bool>(false)
    let running = Mutex<[String: ContinuousClock.Instant]>([:])
    let handled = Atomic<Int>(0)
    private let slots: SlotLimiter
    /// The jobs running now by app, which the take shares the slots by, and the bulk-lane jobs
    /// among them, which it bounds by the bulk slots (fair scheduling).
    private let runningNow = Mutex(RunningJobs())
    /// Set from before a take until the wait for the bell that may follow it ends: a unit that
    /// ends meanwhile rings the worker's own bell, so that the slots it frees are filled at once
    /// rather than after the block time (they may be what the take lacked: a cap, bulk slots).
    private let mayAwaitBell = Atomic<Bool>(false)
    let metrics: WorkerMetrics

    /// `redis` is the reader's connection configuration (its command timeout is raised above the
    /// block time); `queue.redis` serves everything else.
    package convenience init(
        queue: JobQueue, handlers: JobHandlers, redis: RedisConfiguration, configuration: JobWorkerConfiguration = JobWorkerConfiguration(),
        logger: Logger = Logger(label: "richpush.worker")
    ) {
        self.init(queue: queue, handlers: handlers, locator: .standalone(redis), configuration: configuration, logger: logger)
    }

    /// `locator` finds the node of the queue's stream for the reader's own connection (on Redis
    /// Cluster, again after a failover or a reshard); `queue.redis` serves everything else.
    /// `appLabels`: how its per-app series are named (one for the whole process).
    package init(
        queue: JobQueue, handlers: JobHandlers, locator: RedisNodeLocator, configuration: JobWorkerConfiguration = JobWorkerConfiguration(),
        appLabels: AppLabels = AppLabels(), logger: Logger = Logger(label: "richpush.worker")
    ) {
        self.queue = queue
        self.metrics = WorkerMetrics(appLabels: appLabels)
        self.handlers = handlers
        self.configuration = configuration
        self.locator = locator
        self.slots = SlotLimiter(capacity: configuration.concurrency)
        var logger = logger
        logger[metadataKey: "consumer"] = "\(configuration.consumer)"
        self.logger = logger
    }

    /// Jobs this worker finished (acknowledged, retried, dead-lettered or dropped) since it started.
    package var handledCount: Int { handled.load(ordering: .relaxed) }

    /// Asks the loop to stop as a graceful shutdown would (for embedding without a ServiceGroup).
    package func stop() {
        stopping.store(true, ordering: .relaxed)
        slots.interrupt()
        if queue.configuration.scheduling == .fair && mayAwaitBell.load(ordering: .sequentiallyConsistent) {
            // The loop may be waiting for the bell: wake it rather than let it wait out the block.
            let queue = queue, consumer = configuration.consumer
            Task { try? await queue.ringOwnBell(of: consumer) }
        }
    }

    package func run() async throws {
        let reader = RedisReaderConnection(
            locator: locator, key: queue.configuration.streamKey, timeout: configuration.blockTime + .seconds(5),
            suffix: "reader", logger: logger)
        let acks = AckBuffer(queue: queue, consumer: configuration.consumer, logger: logger)
        logger.info(
            "worker started",
            metadata: [
                "stream": "\(queue.configuration.streamKey)", "concurrency": "\(configuration.concurrency)",
                "handlers": "\(handlers.types.joined(separator: ","))",
            ])
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await acks.run() }
                group.addTask { await self.keepLeases() }
                await fetchLoop(reader: reader) { deliveries in
                    let limit = self.unitLimit(for: deliveries, running: self.runningNow.withLock { $0.byApp })
                    for unit in self.units(of: deliveries, limit: limit) {
                        let apps = unit.apps, bulk = unit.bulk
                        self.runningNow.withLock { $0.add(apps, bulk: bulk) }
                        group.addTask {
                            await self.run(unit, acks: acks)
                            self.runningNow.withLock { $0.remove(apps, bulk: bulk) }
                            self.slots.release(unit.count)
                            await self.ringIfAwaitingBell()
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

    var isStopping: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    private func fetchLoop(reader: RedisReaderConnection, submit: ([JobQueue.Delivery]) -> Void) async {
        var backoff = Duration.milliseconds(50)
        var groupReady = false
        var nextMaintenance = ContinuousClock.now
        var nextHousekeeping = ContinuousClock.now + configuration.housekeepingInterval
        var lastReadWasPartial = false
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
                    if queue.configuration.scheduling == .fifo {
                        // Jobs a fair producer admitted (a deployment changing its scheduling)
                        // move into the stream here, so that none waits for ever.
                        _ = try await queue.take(for: configuration.consumer, count: 1000, read: false)
                    }
                    let reclaimed = try await queue.reclaim(for: configuration.consumer, count: free)
                    if !reclaimed.jobs.isEmpty || !reclaimed.poison.isEmpty {
                        logger.info(
                            "reclaimed abandoned jobs",
                            metadata: ["claimed": "\(reclaimed.jobs.count)", "poison": "\(reclaimed.poison.count)"])
                    }
                    await deadLetterPoison(reclaimed.poison)
                    deliveries = reclaimed.jobs
                }
                if ContinuousClock.now >= nextHousekeeping {
                    nextHousekeeping = ContinuousClock.now + configuration.housekeepingInterval
                    try await housekeeping()
                }
                if deliveries.isEmpty {
                    if lastReadWasPartial && configuration.linger > .zero { try? await Task.sleep(for: configuration.linger) }
                    let count = min(free, configuration.batchSize)
                    deliveries = try await next(count, reader: reader)
                    lastReadWasPartial = !deliveries.isEmpty && deliveries.count < count
                }
                slots.take(deliveries.count)
                if !deliveries.isEmpty { submit(deliveries) }
                backoff = .milliseconds(50)
            } catch {
                await reader.failed(error)
                if let error = error as? RedisError, error.serverErrorPrefix == "NOGROUP" {
                    groupReady = false  // Redis lost the group (restart without persistence): make it again
                }
                logger.warning("fetching jobs failed, backing off", metadata: ["error": "\(error)", "backoff": "\(backoff)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    /// The next jobs: in fair order, what the take script moves and reads, else a wait for the
    /// bell (an empty answer: the loop comes back); in arrival order, a blocking read.
    private func next(_ count: Int, reader: RedisReaderConnection) async throws -> [JobQueue.Delivery] {
        switch queue.configuration.scheduling {
        case .fair:
            mayAwaitBell.store(true, ordering: .sequentiallyConsistent)
            defer { mayAwaitBell.store(false, ordering: .sequentiallyConsistent) }
            let running = runningNow.withLock { $0 }
            let taken = try await queue.take(
                for: configuration.consumer, count: count, quantum: configuration.fairQuantum,
                slots: configuration.concurrency, running: running.byApp,
                bulkRoom: configuration.bulkSlots - running.bulk)
            if taken.isEmpty {
                try await queue.waitForWork(
                    on: try await reader.connection(), block: configuration.blockTime, consumer: configuration.consumer)
            }
            return taken
        case .fifo:
            return try await queue.read(
                on: try await reader.connection(), consumer: configuration.consumer, count: count, block: configuration.blockTime)
        }
    }

    /// Rings the worker's own bell if its loop may be waiting for the bell (see ``mayAwaitBell``).
    /// A lost ring costs at most one block time's wait: logged, nothing else.
    private func ringIfAwaitingBell() async {
        guard mayAwaitBell.load(ordering: .sequentiallyConsistent), !isStopping else { return }
        do {
            try await queue.ringOwnBell(of: configuration.consumer)
        } catch {
            logger.debug("could not ring the worker's own bell", metadata: ["error": "\(error)"])
        }
    }

    private func housekeeping() async throws {
        let trimmed = try await queue.trim()
        let removed = try await queue.removeStaleConsumers(idleLongerThan: configuration.staleConsumerAge, except: configuration.consumer)
        if let fixed = try await queue.recountInFlight(), fixed > 0 {
            logger.warning(
                "set apps' counts of jobs in flight right (a write was lost, e.g. in a failover)", metadata: ["apps": "\(fixed)"])
        }
        if trimmed > 0 || !removed.isEmpty {
            logger.info("housekeeping", metadata: ["trimmed": "\(trimmed)", "removedConsumers": "\(removed.joined(separator: ","))"])
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
