import Synchronization

/// Bounds work of one kind in this process: at most `concurrency` run at once and at most
/// `queueLimit` wait (first come, first served); one more is refused at once with 503 and
/// `Retry-After: 1`, so a burst cannot stall everyone or hold unbounded memory.
final class WorkGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    let concurrency: Int
    let queueLimit: Int
    /// The 503's message: what there is too much of.
    let busy: String

    init(concurrency: Int, queueLimit: Int, busy: String) {
        self.concurrency = max(1, concurrency)
        self.queueLimit = max(0, queueLimit)
        self.busy = busy
    }

    /// Work waiting for a slot (tests watch it).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `work` once a slot is free, or throws the 503 when too many already wait.
    func run<T>(_ work: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await work()
    }

    private func acquire() async throws {
        enum Decision { case run, wait, refuse }
        let decision: Decision = state.withLock { state in
            if state.running < concurrency { state.running += 1; return .run }
            return state.waiting.count < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .run: return
        case .refuse: throw APIError.unavailable("\(busy); retry shortly", retryAfter: 1)
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let runNow = state.withLock { state in
                    // A slot may have freed between the decision and here.
                    if state.running < concurrency { state.running += 1; return true }
                    state.waiting.append(continuation)
                    return false
                }
                if runNow { continuation.resume() }
            }
        }
    }

    private func release() {
        // The slot passes straight to the first waiter; it is resumed outside the lock.
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            if state.waiting.isEmpty { state.running -= 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
