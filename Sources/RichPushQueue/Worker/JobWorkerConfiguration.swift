import Foundation

/// How one worker process takes jobs.
package struct JobWorkerConfiguration: Sendable {
    /// Name in the consumer group; unique per process (`host:pid:random` by default).
    package var consumer: String
    /// Jobs run at once by this worker.
    package var concurrency: Int
    /// Most jobs fetched by one read (or take).
    package var batchSize: Int
    /// How long one XREADGROUP waits for new jobs; bounds how long a shutdown waits for the read.
    package var blockTime: Duration
    /// After a read that found some jobs but fewer than it asked for, how long the next read
    /// waits so that more jobs gather (as Kafka's `linger.ms`): at a moderate rate a read then
    /// takes several jobs and their scripts run once per batch, not per job. Full reads (a
    /// backlog) and empty ones (an idle queue, where the blocking read answers at once) never
    /// wait. Zero turns it off.
    package var linger: Duration
    /// How long a graceful shutdown waits for running jobs before releasing them to other workers.
    package var drainTimeout: Duration
    /// How often the worker reclaims abandoned jobs and promotes due retries.
    package var maintenanceInterval: Duration
    /// How often the worker trims the stream by age and removes stale consumers.
    package var housekeepingInterval: Duration
    /// A consumer with nothing pending and idle this long is removed from the group.
    package var staleConsumerAge: Duration
    /// Fair scheduling: the fewest jobs an app gives when the take picks it (1 interleaves apps
    /// job by job; more costs fewer picks per take, at a coarser grain).
    package var fairQuantum: Int
    /// Fair scheduling: the most jobs of one batch unit (run together, their slots freed together)
    /// while several apps share this worker, so each app's jobs hold their slots as long as
    /// another's (0: whole reads, as when one app is alone).
    package var fairUnitSize: Int
    /// Fair scheduling: job slots that bulk-lane jobs (fan-out sub-jobs, hundreds of pushes each)
    /// never take, kept for notifications to one or a few devices, so that those start while a
    /// fan-out fills the worker (0: none; bulk jobs always keep at least one slot).
    package var nowSlots: Int

    /// The most bulk-lane jobs this worker runs at once.
    package var bulkSlots: Int { max(concurrency - max(nowSlots, 0), 1) }

    package init(
        consumer: String = JobWorkerConfiguration.defaultConsumerName(),
        concurrency: Int = 32,
        batchSize: Int = 64,
        blockTime: Duration = .milliseconds(500),
        linger: Duration = .milliseconds(5),
        drainTimeout: Duration = .seconds(10),
        maintenanceInterval: Duration = .milliseconds(500),
        housekeepingInterval: Duration = .seconds(60),
        staleConsumerAge: Duration = .seconds(3600),
        fairQuantum: Int = 4,
        fairUnitSize: Int = 16,
        nowSlots: Int = 8
    ) {
        self.consumer = consumer
        self.concurrency = concurrency
        self.batchSize = batchSize
        self.blockTime = blockTime
        self.linger = linger
        self.drainTimeout = drainTimeout
        self.maintenanceInterval = maintenanceInterval
        self.housekeepingInterval = housekeepingInterval
        self.staleConsumerAge = staleConsumerAge
        self.fairQuantum = fairQuantum
        self.fairUnitSize = fairUnitSize
        self.nowSlots = nowSlots
    }

    package static func defaultConsumerName() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(host):\(ProcessInfo.processInfo.processIdentifier):\(random)"
    }
}
