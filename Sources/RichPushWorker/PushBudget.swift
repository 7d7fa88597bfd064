/// A worker's bound on pushes held at once, shared by the batches it runs concurrently: a round
/// of pushes waits until the rounds before it leave room. Waiters are served in order, so a large
/// round is not starved by small ones.
actor PushBudget {
    private let limit: Int
    private var inUse = 0
    private var waiting: [(pushes: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes room for `pushes` (at most the whole budget), waiting for it if need be.
    func acquire(_ pushes: Int) async {
        let pushes = min(max(pushes, 1), limit)
        if waiting.isEmpty && inUse + pushes <= limit {
            inUse += pushes
            return
        }
        await withCheckedContinuation { waiting.append((pushes, $0)) }
    }

    /// Gives back what ``acquire(_:)`` took for `pushes`.
    func release(_ pushes: Int) {
        inUse -= min(max(pushes, 1), limit)
        while let first = waiting.first, inUse + first.pushes <= limit {
            waiting.removeFirst()
            inUse += first.pushes
            first.continuation.resume()
        }
    }
}
