package import RichPushCore
import Synchronization

/// A push adapter that keeps what it was given and answers what the test decides: each push's
/// outcome comes from `outcome` (default: sent), and `failAll` makes a whole send throw, as an
/// unreachable platform does.
package final class InMemoryPushAdapter: PushAdapter {
    package let name = "memory"
    private let sent = Mutex<[OutgoingPush]>([])
    private let sizes = Mutex<[Int]>([])
    private let failure = Mutex<(any Error)?>(nil)
    private let outcome: @Sendable (OutgoingPush) -> PushOutcome

    package init(outcome: @escaping @Sendable (OutgoingPush) -> PushOutcome = { .sent(adapterID: "mem-\($0.installation.id)") }) {
        self.outcome = outcome
    }

    /// Every push handed to the adapter (and not refused by a thrown send), in order.
    package var pushes: [OutgoingPush] { sent.withLock { $0 } }
    /// How many pushes each send call carried, in order.
    package var sendSizes: [Int] { sizes.withLock { $0 } }

    /// Makes every send throw `error` (nil: works again).
    package func failAll(with error: (any Error)?) {
        failure.withLock { $0 = error }
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        if let error = failure.withLock({ $0 }) { throw error }
        sent.withLock { $0 += pushes }
        sizes.withLock { $0.append(pushes.count) }
        return pushes.map(outcome)
    }
}
