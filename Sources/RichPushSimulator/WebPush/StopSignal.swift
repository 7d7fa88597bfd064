import Synchronization

/// Set once, by ``stop()``: loops read it, and a back-off wait ends at once when it is set, so a
/// device waiting to reconnect does not hold up a shutdown.
final class StopSignal: Sendable {
    private struct State {
        var stopped = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        // Resumed outside the lock.
        for waiter in waiters { waiter.resume() }
    }

    /// Waits `duration`, or less if stopped meanwhile; whether it is stopped.
    func sleep(for duration: Duration) async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
        return isStopped
    }

    /// Returns once stopped, or when the task is cancelled.
    private func wait() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    // Checked under the lock that `stop()` and the cancellation take too, so
                    // neither can slip in between the check and the registration.
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
