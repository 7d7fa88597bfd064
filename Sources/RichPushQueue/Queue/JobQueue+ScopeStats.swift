import Hiredis

/// Per-scope (per-app) numbers under fair scheduling: one script per partition
/// (``QueueScripts/scopeStats``), all partitions in one pipelined round trip.
extension JobQueue {
    /// The script's call for this partition; `also`: scopes to report even when idle here.
    func scopeStatsCall(also: [String] = []) -> QueueScripts.ScopeStatsCall {
        QueueScripts.ScopeStatsCall(
            ready: configuration.readyKey, scheduler: configuration.schedulerKey,
            waitPrefix: configuration.waitPrefix, failuresPrefix: configuration.failuresPrefix, also: also)
    }

    /// Each partition's busy scopes (jobs waiting or in flight), in the queues' order, in one
    /// pipelined round trip on the first queue's Redis. The waiting, in-flight and oldest numbers
    /// of a scope are whole here (a partition where it is idle adds nothing to them); its taken
    /// and done totals cover only the partitions where it is busy (see ``scopeTotals(_:in:)``).
    package static func scopeStats(in queues: [JobQueue]) async throws -> [[String: ScopeStats]] {
        guard let redis = queues.first?.redis else { return [] }
        let replies = try await redis.pipeline(
            queues.map { QueueScripts.scopeStats.command($0.scopeStatsCall()) },
            loading: [QueueScripts.scopeStats.script])
        let now = nowMilliseconds()
        return try replies.map { try scopeStats(from: $0.throwingError(), now: now) }
    }

    /// The scopes of `partitions` (as ``scopeStats(in:)`` read them) totalled over every
    /// partition: for a scope busy in some partitions only, a second pipelined read adds the
    /// taken and done totals of the others (none with one partition, or when every busy scope is
    /// busy everywhere).
    package static func scopeTotals(_ partitions: [[String: ScopeStats]], in queues: [JobQueue]) async throws -> [String: ScopeStats] {
        let busy = Set(partitions.flatMap(\.keys))
        var reads: [(index: Int, call: QueueScripts.ScopeStatsCall)] = []
        for (index, (queue, scopes)) in zip(queues, partitions).enumerated() {
            let missing = busy.subtracting(scopes.keys).sorted()
            if !missing.isEmpty { reads.append((index, queue.scopeStatsCall(also: missing))) }
        }
        guard !reads.isEmpty, let redis = queues.first?.redis else { return ScopeStats.total(partitions) }
        let replies = try await redis.pipeline(
            reads.map { QueueScripts.scopeStats.command($0.call) }, loading: [QueueScripts.scopeStats.script])
        var complete = partitions
        let now = nowMilliseconds()
        for (read, reply) in zip(reads, replies) {
            // The scopes it had already reported come again, unchanged in meaning: keep the first read's.
            complete[read.index].merge(try scopeStats(from: reply.throwingError(), now: now)) { first, _ in first }
        }
        return ScopeStats.total(complete)
    }

    /// The script's rows `{scope, now, bulk, enq, inFlight, taken, done, weight, cap, paused, retried, deadLettered, failures, sent}` by scope,
    /// ages counted to `now` (ms).
    static func scopeStats(from reply: RedisValue, now: Int64) -> [String: ScopeStats] {
        var scopes: [String: ScopeStats] = [:]
        for row in reply.array ?? [] {
            guard let fields = row.array, fields.count == 14, let scope = fields[0].string else { continue }
            let number = fields.prefix(12).map { $0.int ?? 0 }
            let enqueued = Int64(number[3])
            scopes[scope] = ScopeStats(
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
        return scopes
    }
}
