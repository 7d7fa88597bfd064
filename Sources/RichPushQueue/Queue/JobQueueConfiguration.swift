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
    /// In which order workers take jobs: fair across apps (apps, the default) or in arrival order.
    package var scheduling: JobScheduling

    package init(
        prefix: String = "richpush",
        partition: String = "q0",
        group: String = "workers",
        visibilityTimeout: Duration = .seconds(30),
        maxDeliveries: Int = 5,
        retention: Duration = .seconds(24 * 3600),
        idempotencyTTL: Duration = .seconds(24 * 3600),
        retry: RetryPolicy = RetryPolicy(),
        scheduling: JobScheduling = .fair
    ) {
        self.prefix = prefix
        self.partition = partition
        self.group = group
        self.visibilityTimeout = visibilityTimeout
        self.maxDeliveries = maxDeliveries
        self.retention = retention
        self.idempotencyTTL = idempotencyTTL
        self.retry = retry
        self.scheduling = scheduling
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

    // Fair scheduling (docs/queue.md#fair-scheduling): jobs wait in their app's lanes, and the
    // take script moves them into the stream in fair order.

    /// The apps with waiting jobs, scored by their pass (virtual time).
    package var readyKey: String { "\(base):ready" }
    /// The scheduler's numbers: the virtual time, jobs waiting, and per app its weight, cap,
    /// jobs in flight, pass and counters (``SchedulerField``).
    package var schedulerKey: String { "\(base):sched" }
    /// Tokens that wake a worker blocked with nothing to take.
    package var bellKey: String { "\(base):bell" }
    /// The prefix of every lane's list: `<waitPrefix><app>:<lane>`.
    package var waitPrefix: String { "\(base):wait:" }
    /// The list where `app`'s jobs of `lane` wait.
    package func waitKey(app: String, lane: JobLane) -> String { "\(waitPrefix)\(app):\(lane.rawValue)" }
    /// The prefix of every app's failed-push totals: `<failuresPrefix><app>`.
    package var failuresPrefix: String { "\(base):fails:" }
    /// `app`'s pushes that failed, by reason code (a hash `code → total`, at most
    /// ``JobQueue/failureCodesPerApp`` codes and `other`; docs/redis-keys.md).
    package func failuresKey(app: String) -> String { "\(failuresPrefix)\(app)" }
}

/// The order in which workers take jobs.
package enum JobScheduling: String, Sendable, Hashable, CaseIterable {
    /// Weighted fair across apps: each app's jobs wait in its own lanes, and workers take
    /// from the apps with work by weight (stride scheduling), capped per app by its jobs in
    /// flight; inside an app the `now` lane goes before the `bulk` one. Work-conserving: an app
    /// alone gets every worker.
    case fair
    /// Arrival order, one stream per partition (the scheduling before fair scheduling, kept to
    /// measure against).
    case fifo
}
