import Synchronization

/// The pushes each job's run got accepted by its platform (sent, or held by the simulated hub),
/// by job id, until the worker asks (``RichPushJobHandler/takeAccepted(_:)``) and adds them to the
/// job's app's total when it settles the job. Shared by a handler and its per-app copies.
final class AcceptedPushes: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func add(_ count: Int, to jobID: String) {
        guard count > 0 else { return }
        counts.withLock { $0[jobID, default: 0] += count }
    }

    func take(_ jobID: String) -> Int {
        counts.withLock { $0.removeValue(forKey: jobID) ?? 0 }
    }
}
