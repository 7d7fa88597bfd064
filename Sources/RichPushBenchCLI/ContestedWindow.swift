import RichPushCommands
import RichPushQueue

/// `bench fairness --hold-load`: the apps were paused while they created their load, so each has
/// a backlog; they are resumed together (one pipelined call per partition) and each one's pushes
/// received are counted from then until the first app has received everything it created. Over
/// that window every app has work waiting at every take: the shares are the scheduler's, not the
/// producers' (two floods through one API on 2 cores create less than the workers can send, so
/// without a backlog each app simply gets what it asks).
struct ContestedWindow: Codable, Sendable {
    /// Its length, from the resume until the first app drained (or the limit).
    var seconds: Double
    /// Pushes received per second over it, by app.
    var throughput: [String: Double]

    static func measure(
        resuming apps: [String], in queues: [JobQueue], recorders: [String: AppLoadRecorder], limit: Duration
    ) async throws -> ContestedWindow {
        _ = try await JobQueue.setPaused(false, apps: apps, in: queues)
        let resumed = ContinuousClock.now
        let before = recorders.mapValues(\.receivedCount)
        let deadline = resumed + limit
        while ContinuousClock.now < deadline, !recorders.values.contains(where: \.isComplete) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let seconds = (ContinuousClock.now - resumed) / .seconds(1)
        let throughput = recorders.mapValues { Double($0.receivedCount) }.merging(before.mapValues(Double.init)) { now, then in now - then }
        return ContestedWindow(seconds: seconds, throughput: throughput.mapValues { seconds > 0 ? $0 / seconds : 0 })
    }
}
