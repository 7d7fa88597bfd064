/// Where a queue lives in Redis and how its jobs are retried, reclaimed and retained.
package struct JobQueueConfiguration: Sendable, Hashable {
    /// Namespace of every key (`<prefix>:{<partition>}:jobs`, …).
    package var prefix: String
    /// The hash tag shared by all keys of this queue, so each script touches one Redis Cluster slot.
    package var partition: String
    /// The consumer group every worker joins.
    package var group: String
    /// How long a delivered job may stay unacknowledged before another worker reclaims it.
    package var visibilityTimeout: Duration
    /// Deliveries after which an unacknowledged job is a poison pill and goes to the dead letters.
    package var maxDeliveries: Int
    /// How long acknowledged jobs stay in the stream for `replay` (trimmed by age, never per job).
    package var retention: Duration
    /// How long an idempotency key keeps a second enqueue from adding anything.
    package var idempotencyTTL: Duration
    package var retry: RetryPolicy

    package init(
        prefix: String = "richpush",
        partition: String = "q0",
        group: String = "workers",
        visibilityTimeout: Duration = .seconds(30),
        maxDeliveries: Int = 5,
        retention: Duration = .seconds(24 * 3600),
        idempotencyTTL: Duration = .seconds(24 * 3600),
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.prefix = prefix
        self.partition = partition
        self.group = group
        self.visibilityTimeout = visibilityTimeout
        self.maxDeliveries = maxDeliveries
        self.retention = retention
        self.idempotencyTTL = idempotencyTTL
        self.retry = retry
    }

    var base: String { "\(prefix):{\(partition)}" }
    /// The stream of jobs.
    package var streamKey: String { "\(base):jobs" }
    /// Jobs waiting for their retry time, scored by due time in ms.
    package var delayedKey: String { "\(base):delayed" }
    /// The dead-letter stream.
    package var deadKey: String { "\(base):dead" }
    /// Totals: processed, failed, retried, dead.
    package var countersKey: String { "\(base):counters" }
    func idempotencyKey(_ key: String) -> String { "\(base):idem:\(key)" }
}
