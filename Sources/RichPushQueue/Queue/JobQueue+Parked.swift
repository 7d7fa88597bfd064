import Hiredis

/// Each app's parked jobs: scheduled sends and retries waiting in the delayed set, and
/// dead letters. Unlike the lanes and the in-flight counts (``AppQueueStats``), no counter keeps
/// these by app, so they are read: slice by slice (1,000 members per script call, each short),
/// up to a limit per key. A reading, not a snapshot: jobs move while it walks.
package struct ParkedJobs: Sendable, Hashable {
    package var scheduled: [String: Int] = [:]
    package var retrying: [String: Int] = [:]
    package var dead: [String: Int] = [:]
    /// False when a key held more than the limit: the numbers are then at least these.
    package var complete = true

    package init() {}

    /// Two partitions' numbers together.
    package func adding(_ other: ParkedJobs) -> ParkedJobs {
        var total = self
        total.scheduled.merge(other.scheduled, uniquingKeysWith: +)
        total.retrying.merge(other.retrying, uniquingKeysWith: +)
        total.dead.merge(other.dead, uniquingKeysWith: +)
        total.complete = complete && other.complete
        return total
    }

    /// Every partition's, added up.
    package static func read(_ queues: [JobQueue], limit: Int) async throws -> ParkedJobs {
        var total = ParkedJobs()
        for queue in queues { total = total.adding(try await queue.parkedJobs(limit: limit)) }
        return total
    }
}

extension JobQueue {
    static let parkedSlice = 1000

    /// This partition's parked jobs by app, reading at most `limit` members of each key.
    package func parkedJobs(limit: Int) async throws -> ParkedJobs {
        var parked = ParkedJobs()
        var rank = 0
        while rank < limit {
            let reply =
                try await redis.run(
                    QueueScripts.delayedSlice,
                    QueueScripts.ParkedSliceCall(key: configuration.delayedKey, start: String(rank), count: Self.parkedSlice)
                ).array ?? []
            let read = reply.first?.int ?? 0
            for index in stride(from: 1, to: reply.count - 2, by: 3) {
                guard let app = reply[index].string else { continue }
                parked.scheduled[app, default: 0] += reply[index + 1].int ?? 0
                parked.retrying[app, default: 0] += reply[index + 2].int ?? 0
            }
            rank += read
            if read < Self.parkedSlice { break }
            if rank >= limit { parked.complete = false }
        }
        var after = "-"
        var seen = 0
        while seen < limit {
            let reply =
                try await redis.run(
                    QueueScripts.deadSlice, QueueScripts.ParkedSliceCall(key: configuration.deadKey, start: after, count: Self.parkedSlice)
                ).array ?? []
            let read = reply.first?.int ?? 0
            for index in stride(from: 2, to: reply.count - 1, by: 2) {
                guard let app = reply[index].string else { continue }
                parked.dead[app, default: 0] += reply[index + 1].int ?? 0
            }
            seen += read
            after = reply.count > 1 ? (reply[1].string ?? after) : after
            if read < Self.parkedSlice { break }
            if seen >= limit { parked.complete = false }
        }
        return parked
    }
}
