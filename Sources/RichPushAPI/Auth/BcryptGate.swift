import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// Bounds bcrypt work: at most `concurrency` checks run (on NIO's thread pool, never on an event
/// loop or the cooperative pool) and at most `queueLimit` wait; a check beyond that is refused
/// with 503 at once, so a burst of logins cannot stall everyone for seconds.
final class BcryptGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    let concurrency: Int
    let queueLimit: Int

    init(concurrency: Int, queueLimit: Int) {
        self.concurrency = max(1, concurrency)
        self.queueLimit = max(0, queueLimit)
    }

    /// Whether `password` matches the bcrypt `hash`.
    func verify(_ password: String, hash: String) async throws -> Bool {
        try await acquire()
        defer { release() }
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }

    private func acquire() async throws {
        enum Decision { case run, wait, refuse }
        let decision: Decision = state.withLock { state in
            if state.running < concurrency { state.running += 1; return .run }
            return state.waiting.count < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .run: return
        case .refuse: throw APIError.unavailable("too many logins are being checked; retry shortly", retryAfter: 1)
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
