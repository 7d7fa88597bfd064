/// A snapshot of the queue, as `richpush stats` prints it and the API reads it for back-pressure.
package struct QueueStats: Sendable, Hashable, Codable {
    package struct Consumer: Sendable, Hashable, Codable {
        package let name: String
        package let pending: Int
        /// Milliseconds since the consumer last read or claimed.
        package let idleMilliseconds: Int
    }

    /// Jobs waiting in their apps' lanes for a worker's take (fair scheduling).
    package var waiting: Int = 0
    /// Entries in the stream (retained history included).
    package var length: Int
    /// Entries not yet delivered to the group.
    package var lag: Int
    /// Delivered, not yet acknowledged.
    package var pending: Int
    /// Age of the oldest pending job, from its enqueue time, in ms (0 when none).
    package var oldestPendingAgeMilliseconds: Int
    package var delayed: Int
    package var deadLetters: Int
    package var consumers: [Consumer]
    package var processed: Int
    package var retried: Int
    package var failed: Int
    package var deadLettered: Int
    /// Jobs each worker consumer finished, by consumer name; consumers that have left stay listed.
    package var processedByConsumer: [String: Int]
    /// Fair scheduling's numbers by app (its id; `_` for jobs that name none), for the
    /// apps with jobs waiting or in flight; read only when asked for (``read(_:perApp:)``).
    package var apps: [String: AppQueueStats] = [:]

    /// Jobs accepted and not finished: the number back-pressure bounds.
    package var backlog: Int { waiting + lag + pending + delayed }
}

extension QueueStats {
    /// Reads every partition's stats (one queue's stats when there is one) and totals them;
    /// `perApp`: with each busy app's numbers (``apps``).
    package static func read(_ queues: [JobQueue], perApp: Bool = false) async throws -> QueueStats {
        try await snapshot(queues, perApp: perApp).total
    }

    /// Every partition's stats and their total; `perApp`: with each busy app's numbers, whose
    /// taken and done totals in `total` cover every partition (one more pipelined read when an
    /// app is busy in some partitions only).
    package static func snapshot(_ queues: [JobQueue], perApp: Bool = false) async throws -> (total: QueueStats, partitions: [QueueStats]) {
        let partitions = try await partitions(queues, perApp: perApp)
        var total = total(partitions)
        if perApp, queues.count > 1 { total.apps = try await JobQueue.appTotals(partitions.map(\.apps), in: queues) }
        return (total, partitions)
    }

    /// Every partition's stats, in the queues' order; the partitions' round trips overlap
    /// instead of running one after another.
    package static func partitions(_ queues: [JobQueue], perApp: Bool = false) async throws -> [QueueStats] {
        try await withThrowingTaskGroup(of: (Int, QueueStats).self) { group in
            for (index, queue) in queues.enumerated() { group.addTask { (index, try await queue.stats(perApp: perApp)) } }
            var read = [QueueStats?](repeating: nil, count: queues.count)
            while let (index, stats) = try await group.next() { read[index] = stats }
            return read.compactMap { $0 }
        }
    }

    /// The partitions' stats added up: counts summed, the oldest pending age the largest (an
    /// app's numbers alike, its taken and done over the partitions where it is busy), a
    /// consumer (one worker reads every partition under one name) listed once with its pending
    /// and processed summed and its smallest idle time.
    package static func total(_ partitions: [QueueStats]) -> QueueStats {
        guard var total = partitions.first else {
            return QueueStats(
                length: 0, lag: 0, pending: 0, oldestPendingAgeMilliseconds: 0, delayed: 0, deadLetters: 0, consumers: [],
                processed: 0, retried: 0, failed: 0, deadLettered: 0, processedByConsumer: [:])
        }
        for stats in partitions.dropFirst() {
            total.waiting += stats.waiting
            total.length += stats.length
            total.lag += stats.lag
            total.pending += stats.pending
            total.oldestPendingAgeMilliseconds = max(total.oldestPendingAgeMilliseconds, stats.oldestPendingAgeMilliseconds)
            total.delayed += stats.delayed
            total.deadLetters += stats.deadLetters
            total.processed += stats.processed
            total.retried += stats.retried
            total.failed += stats.failed
            total.deadLettered += stats.deadLettered
            total.processedByConsumer.merge(stats.processedByConsumer, uniquingKeysWith: +)
            total.consumers += stats.consumers
            total.apps.merge(stats.apps) { $0.adding($1) }
        }
        let byName = Dictionary(grouping: total.consumers, by: \.name)
        total.consumers = byName.keys.sorted().map { name in
            let all = byName[name]!
            return Consumer(name: name, pending: all.map(\.pending).reduce(0, +), idleMilliseconds: all.map(\.idleMilliseconds).min() ?? 0)
        }
        return total
    }
}
