import Logging
import Synchronization

/// Collects the ids of finished jobs and acknowledges them in batches: while one XACK is in
/// flight, the next batch accumulates, so acks cost one round trip per batch, not per job.
final class AckBuffer: Sendable {
    private struct State {
        var ids: [(id: String, inFlightApp: String?, accepted: Int)] = []
        var waiter: CheckedContinuation<Bool, Never>?
        var closed = false
    }

    private let state = Mutex(State())
    private let queue: JobQueue
    private let consumer: String
    private let logger: Logger

    init(queue: JobQueue, consumer: String, logger: Logger) {
        self.queue = queue
        self.consumer = consumer
        self.logger = logger
    }

    /// Adds a finished job (its id, the app whose count in flight it holds, and the pushes it
    /// got accepted, for that app's total).
    func add(_ job: Job, accepted: Int = 0) {
        let waiter = state.withLock { state in
            state.ids.append((job.id, job.inFlightApp, accepted))
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Ends ``run()`` once everything added so far is acknowledged.
    func close() {
        let waiter = state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    /// Flushes batches until closed and empty. A failed XACK is retried; the ids stay pending in
    /// Redis meanwhile, so a crash here means redelivery, never loss.
    func run() async {
        var backoff = Duration.milliseconds(20)
        var failures = 0
        while let batch = await nextBatch() {
            do {
                try await queue.acknowledge(accepted: batch, consumer: consumer)
                backoff = .milliseconds(20)
                failures = 0
            } catch {
                failures += 1
                if failures > 5 && state.withLock({ $0.closed }) {
                    // Shutting down and Redis will not take the acks: the jobs stay pending and
                    // are redelivered to another worker (at-least-once), rather than hang the exit.
                    logger.error(
                        "giving up acknowledgements at shutdown; these jobs will be redelivered",
                        metadata: ["jobs": "\(batch.count)", "error": "\(error)"])
                    return
                }
                logger.warning("acknowledgement failed, retrying", metadata: ["jobs": "\(batch.count)", "error": "\(error)"])
                state.withLock { $0.ids.insert(contentsOf: batch, at: 0) }
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    private func nextBatch() async -> [(id: String, inFlightApp: String?, accepted: Int)]? {
        while true {
            let taken: [(id: String, inFlightApp: String?, accepted: Int)]? = state.withLock { state in
                if !state.ids.isEmpty {
                    defer { state.ids.removeAll(keepingCapacity: true) }
                    return state.ids
                }
                return state.closed ? nil : []
            }
            guard let taken else { return nil }
            if !taken.isEmpty { return taken }
            let more = await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool? in
                    if !state.ids.isEmpty { return true }
                    if state.closed { return false }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
            if !more && state.withLock({ $0.ids.isEmpty }) { return nil }
        }
    }
}
