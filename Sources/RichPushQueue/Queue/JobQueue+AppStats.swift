import Hiredis

/// Per-app (per-app) numbers under fair scheduling: one script per partition
/// (``QueueScripts/appStats``), all partitions in one pipelined round trip.
extension JobQueue {
    /// The script's call for this partition; `also`: apps to report even when idle here.
    func appStatsCall(also: [String] = []) -> QueueScripts.AppStatsCall {
        QueueScripts.AppStatsCall(
            ready: configuration.readyKey, scheduler: configuration.schedulerKey,
            waitPrefix: configuration.waitPrefix, failuresPrefix: configuration.failuresPrefix, also: also)
    }

    /// Each partition's busy apps (jobs waiting or in flight), in the queues' order, in one
    /// pipelined round trip on the first queue's Redis. The waiting, in-flight and oldest numbers
    /// of an app are whole here (a partition where it is idle adds nothing to them); its taken
    /// and done totals cover only the partitions where it is busy (see ``appTotals(_:in:)``).
    package static func appStats(in queues: [JobQueue]) async throws -> [[String: AppQueueStats]] {
        guard let redis = queues.first?.redis else { return [] }
        let replies = try await redis.pipeline(
            queues.map { QueueScripts.appStats.command($0.appStatsCall()) },
            loading: [QueueScripts.appStats.script])
        let now = nowMilliseconds()
        return try replies.map { try appStats(from: $0.throwingError(), now: now) }
    }

    /// The apps of `partitions` (as ``appStats(in:)`` read them) totalled over every
    /// partition: for an app busy in some partitions only, a second pipelined read adds the
    /// taken and done totals of the others (none with one partition, or when every busy app is
    /// busy everywhere).
    package static func appTotals(_ partitions: [[String: AppQueueStats]], in queues: [JobQueue]) async throws -> [String: AppQueueStats] {
        let busy = Set(partitions.flatMap(\.keys))
        var reads: [(index: Int, call: QueueScripts.AppStatsCall)] = []
        for (index, (queue, apps)) in zip(queues, partitions).enumerated() {
            let missing = busy.subtracting(apps.keys).sorted()
            if !missing.isEmpty { reads.append((index, queue.appStatsCall(also: missing))) }
        }
        guard !reads.isEmpty, let redis = queues.first?.redis else { return AppQueueStats.total(partitions) }
        let replies = try await redis.pipeline(
            reads.map { QueueScripts.appStats.command($0.call) }, loading: [QueueScripts.appStats.script])
        var complete = partitions
        let now = nowMilliseconds()
        for (read, reply) in zip(reads, replies) {
            // The apps it had already reported come again, unchanged in meaning: keep the first read's.
            complete[read.index].merge(try appStats(from: reply.throwingError(), now: now)) { first, _ in first }
        }
        return AppQueueStats.total(complete)
    }

    /// The script's rows `{app, now, bulk, enq, inFlight, taken, done, weight, cap, paused, retried, deadLettered, failures, sent}` by app,
    /// ages counted to `now` (ms).
    static func appStats(from reply: RedisValue, now: Int64) -> [String: AppQueueStats] {
        var apps: [String: AppQueueStats] = [:]
        for row in reply.array ?? [] {
            guard let fields = row.array, fields.count == 14, let app = fields[0].string else { continue }
            let number = fields.prefix(12).map { $0.int ?? 0 }
            let enqueued = Int64(number[3])
            apps[app] = AppQueueStats(
                waitingNow: number[1], waitingBulk: number[2],
                oldestWaitingAgeMilliseconds: enqueued > 0 ? Int(max(now - enqueued, 0)) : 0,
                // Settling a job its partition no longer counts (a reclaim raced an ack) may leave
                // the count below 0 for a moment: shown as none.
                inFlight: max(number[4], 0), taken: number[5], done: number[6],
                weight: max(number[7], 1), maxInFlight: number[8] > 0 ? number[8] : nil, paused: number[9] > 0,
                retried: number[10], deadLettered: number[11],
                failedByReason: (dictionary(fields[12]) ?? [:]).compactMapValues { $0.int.flatMap { $0 > 0 ? $0 : nil } },
                sent: fields[13].int ?? 0)
        }
        return apps
    }
}
