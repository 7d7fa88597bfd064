import Synchronization

/// Recipients (device tokens) an answer declared gone, remembered by one process for a short
/// while so that every batch it has under way stops sending to them at once, not only the batch
/// that got the answer: a worker runs many batches at the same time, and each would otherwise
/// learn of the dead token from its own answer, or from the fleet's record once the first batch
/// has ended. The fleet's record (`GoneTokens`, judged against registration times) is what lasts;
/// this is only the bridge until it is written, so entries live `memory` and at most `limit` are
/// kept (past it the expired ones go, then all: a token forgotten here is still in the record).
package final class HTTP2GoneRecipients: Sendable {
    private let memory: Duration
    private let limit: Int
    private let count = Atomic<Int>(0)
    private let recipients = Mutex<[String: ContinuousClock.Instant]>([:])

    package init(memory: Duration = .seconds(60), limit: Int = 100_000) {
        self.memory = memory
        self.limit = max(1, limit)
    }

    /// Whether an answer declared `recipient` gone within the last `memory`.
    package func contains(_ recipient: String?) -> Bool {
        guard let recipient, count.load(ordering: .relaxed) > 0 else { return false }
        return recipients.withLock { recipients in
            guard let until = recipients[recipient] else { return false }
            return until > .now
        }
    }

    package func insert(_ recipient: String) {
        let now = ContinuousClock.now
        let size = recipients.withLock { recipients in
            if recipients.count >= limit {
                recipients = recipients.filter { $0.value > now }
                if recipients.count >= limit { recipients.removeAll() }
            }
            recipients[recipient] = now + memory
            return recipients.count
        }
        count.store(size, ordering: .relaxed)
    }
}
