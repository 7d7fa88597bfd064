import RichPushQueue

/// The retries a "retry now" means: the delayed jobs that failed at least once and match the
/// filter, each known by its partition and origin (`q0/<origin>`: the id it was first enqueued
/// with, the same across its retries), so a confirmation names exactly the counted ones.
extension DelayedSearch {
    /// The retries that match now (`<partition>/<origin>`, sorted), or a 400 past ``maxCount``.
    func countRetries(_ filter: DelayedFilter) async throws -> [String] {
        try await collect(filter.retriesOnly, noun: "retries") { found in found.job.job.map { "\(found.partition)/\($0.origin)" } }
    }

    /// Makes due now the retries that match now and are among `counted`; how many moved.
    func retryNow(matching filter: DelayedFilter, among counted: Set<String>) async throws -> Int {
        var moved = 0
        for queue in queues {
            var members: [[UInt8]] = []
            try await scan(queue, filter.retriesOnly, from: filter.from ?? 0) { jobs, _ in
                for job in jobs where job.job.map({ counted.contains("\(queue.configuration.partition)/\($0.origin)") }) == true {
                    members.append(job.member)
                }
                return true
            }
            moved += try await queue.makeDue(members)
        }
        return moved
    }

    /// Makes due now the retries named `<partition>/<due>/<origin>` that are still there, of the
    /// apps `sees` allows; how many moved.
    func retryNow(_ wanted: [String: [Int64: Set<String>]], sees: (String) -> Bool) async throws -> Int {
        var moved = 0
        for queue in queues {
            guard let byDue = wanted[queue.configuration.partition] else { continue }
            let jobs = try await queue.delayedJobs(dueAt: byDue.keys.sorted())
            let members = jobs.filter { job in
                job.isRetry && sees(DelayedFilter.app(of: job)) && job.job.map { byDue[job.due]?.contains($0.origin) == true } == true
            }.map(\.member)
            moved += try await queue.makeDue(members)
        }
        return moved
    }
}

extension DelayedFilter {
    /// The same filter, retries only.
    var retriesOnly: DelayedFilter {
        var filter = self
        filter.kind = .retry
        return filter
    }
}
