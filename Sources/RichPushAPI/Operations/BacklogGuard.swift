import Synchronization

/// Refuses new work (503 + Retry-After) when the queue's backlog (all partitions together) is
/// over its bound. The backlog is read at most every 250 ms per replica, so the check costs no
/// round trip on most requests.
final class BacklogGuard: Sendable {
    private let readBacklog: @Sendable () async throws -> Int
    private let limit: Int
    private struct State {
        var backlog: Int?
        var read: ContinuousClock.Instant?
        var refreshing = false
    }
    private let state = Mutex(State())

    /// `readBacklog`: the backlog now (on Redis, `JobQueue.backlog(of:)` over every partition).
    init(readBacklog: @escaping @Sendable () async throws -> Int, limit: Int) {
        self.readBacklog = readBacklog
        self.limit = limit
    }

    func check() async throws {
        let now = ContinuousClock.now
        // One request reads the backlog when it is stale; the others meanwhile go by the last
        // figure (a burst of requests does not become a burst of reads).
        let (known, refresh) = state.withLock { state -> (Int?, Bool) in
            if let read = state.read, now - read < .milliseconds(250) { return (state.backlog, false) }
            if state.refreshing, state.backlog != nil { return (state.backlog, false) }
            state.refreshing = true
            return (state.backlog, true)
        }
        var backlog = known
        if refresh {
            do {
                let fresh = try await readBacklog()
                state.withLock { $0 = State(backlog: fresh, read: .now, refreshing: false) }
                backlog = fresh
            } catch {
                state.withLock { $0.refreshing = false }
                throw error
            }
        }
        if let backlog, backlog >= limit {
            throw APIError.unavailable("the delivery queue holds \(backlog) jobs (limit \(limit)); retry later", retryAfter: 5)
        }
    }
}
