/// One app's share of the queue under fair scheduling, as `richpush stats` shows it:
/// what waits in its lanes, how long the oldest has waited, what it has in flight, what it was
/// given, and its weight and cap (see docs/queue.md#fair-scheduling).
package struct AppQueueStats: Sendable, Hashable, Codable {
    /// Jobs waiting in its `now` lane (single-device sends) and its `bulk` lane (fan-out batches).
    package var waitingNow: Int = 0
    package var waitingBulk: Int = 0
    /// Age of the oldest job at the head of its lanes, from its enqueue time, in ms (0 when none
    /// waits). A retry or a scheduled send keeps its first enqueue time, so it counts from then.
    package var oldestWaitingAgeMilliseconds: Int = 0
    /// Jobs taken into the stream and not yet settled.
    package var inFlight: Int = 0
    /// Jobs ever taken into the stream, and acknowledged as done (totals since the keys began).
    package var taken: Int = 0
    package var done: Int = 0
    /// Jobs sent back to retry, and dead-lettered (totals, counted like `done`: jobs taken
    /// through its lanes; a fan-out batch is one job).
    package var retried: Int = 0
    package var deadLettered: Int = 0
    /// Pushes (not jobs) its worker sent that failed, by reason code (`PushFailureCode` in
    /// RichPushCore: the platform's code, `http_<status>`, `timeout`, …): totals since the keys
    /// began, at most ``JobQueue/failureCodesPerApp`` codes and `other` per partition.
    package var failedByReason: [String: Int] = [:]
    /// Pushes (not jobs) the platforms accepted for it (sent, or held by the simulated hub), counted
    /// when their job is acknowledged or sent back to retry: a total since the keys began.
    package var sent: Int = 0
    /// Its weight, and its cap on jobs in flight in each partition (nil: none).
    package var weight: Int = 1
    package var maxInFlight: Int?
    /// Paused (`richpush apps pause`): its jobs wait in its lanes and no worker takes them.
    package var paused: Bool = false

    package init(
        waitingNow: Int = 0, waitingBulk: Int = 0, oldestWaitingAgeMilliseconds: Int = 0, inFlight: Int = 0, taken: Int = 0,
        done: Int = 0, weight: Int = 1, maxInFlight: Int? = nil, paused: Bool = false, retried: Int = 0, deadLettered: Int = 0,
        failedByReason: [String: Int] = [:], sent: Int = 0
    ) {
        self.sent = sent
        self.failedByReason = failedByReason
        self.paused = paused
        self.waitingNow = waitingNow
        self.waitingBulk = waitingBulk
        self.oldestWaitingAgeMilliseconds = oldestWaitingAgeMilliseconds
        self.inFlight = inFlight
        self.taken = taken
        self.done = done
        self.weight = weight
        self.maxInFlight = maxInFlight
        self.retried = retried
        self.deadLettered = deadLettered
    }

    /// Both lanes.
    package var waiting: Int { waitingNow + waitingBulk }

    /// How busy it is, to rank apps: jobs waiting and in flight.
    package var load: Int { waiting + inFlight }

    /// Two partitions' numbers together: counts summed, the oldest age the larger; weight and cap
    /// are the same in every partition (set together), so either is kept.
    package func adding(_ other: AppQueueStats) -> AppQueueStats {
        AppQueueStats(
            waitingNow: waitingNow + other.waitingNow, waitingBulk: waitingBulk + other.waitingBulk,
            oldestWaitingAgeMilliseconds: max(oldestWaitingAgeMilliseconds, other.oldestWaitingAgeMilliseconds),
            inFlight: inFlight + other.inFlight, taken: taken + other.taken, done: done + other.done,
            weight: max(weight, other.weight), maxInFlight: maxInFlight ?? other.maxInFlight, paused: paused || other.paused,
            retried: retried + other.retried, deadLettered: deadLettered + other.deadLettered,
            failedByReason: failedByReason.merging(other.failedByReason, uniquingKeysWith: +), sent: sent + other.sent)
    }

    /// The apps of several partitions added up by name.
    package static func total(_ partitions: [[String: AppQueueStats]]) -> [String: AppQueueStats] {
        var total: [String: AppQueueStats] = [:]
        for partition in partitions {
            total.merge(partition) { $0.adding($1) }
        }
        return total
    }

    /// The `limit` busiest apps (most waiting and in flight, then by name), and how many more there are.
    package static func busiest(_ apps: [String: AppQueueStats], limit: Int) -> (shown: [(app: String, stats: AppQueueStats)], more: Int) {
        let ranked = apps.sorted { $0.value.load != $1.value.load ? $0.value.load > $1.value.load : $0.key < $1.key }
        return (ranked.prefix(limit).map { ($0.key, $0.value) }, max(ranked.count - limit, 0))
    }
}
