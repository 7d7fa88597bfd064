import Synchronization

/// Counts free job slots; the fetch loop waits here when every slot is busy.
final class SlotLimiter: Sendable {
    private struct State {
        var free: Int
        var waiter: CheckedContinuation<Void, Never>?
        var interrupted = false
    }

    let capacity: Int
    private let state: Mutex<State>

    init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State(free: capacity))
    }

    var free: Int { state.withLock { $0.free } }
    var busy: Int { capacity - free }

    /// Waits until at least one slot is free, and returns how many are (0 once interrupted).
    func waitForFreeSlots() async -> Int {
        while true {
            let (free, interrupted) = state.withLock { ($0.free, $0.interrupted) }
            if interrupted { return 0 }
            if free > 0 { return free }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.free > 0 || state.interrupted { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Wakes the waiting fetch loop for good (shutdown).
    func interrupt() {
        let waiter = state.withLock { state in
            state.interrupted = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func take(_ count: Int) {
        state.withLock { $0.free -= count }
    }

    func release(_ count: Int = 1) {
        let waiter = state.withLock { state in
            state.free += count
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
