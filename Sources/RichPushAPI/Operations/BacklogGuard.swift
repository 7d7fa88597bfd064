import RichPushQueue
import Synchronization

/// Refuses new work (503 + Retry-After) when the queue's backlog (all partitions together) is
/// over its bound. The backlog is read at most every 250 ms per replica, so the check costs no
/// round trip on most requests.
final class BacklogGuard: Sendable {
    private let queues: [JobQueue]
    private let limit: Int
    private let cached = Mutex<(backlog: Int, read: ContinuousClock.Instant)?>(nil)

    init(queues: [JobQueue], limit: Int) {
        self.queues = queues
        self.limit = limit
    }

    func check() async throws {
        let now = ContinuousClock.now
        var backlog = cached.withLock { cached in
            cached.flatMap { now - $0.read < .milliseconds(250) ? $0.backlog : nil }
        }
        if backlog == nil {
            var fresh = 0
            for queue in queues { fresh += try await queue.stats().backlog }
            cached.withLock { $0 = (fresh, now) }
            backlog = fresh
        }
        if let backlog, backlog >= limit {
            throw APIError.unavailable("the delivery queue holds \(backlog) jobs (limit \(limit)); retry later", retryAfter: 5)
        }
    }
}
