import Foundation
import RichPushReport
import Synchronization

/// Enqueue times and what the devices saw, keyed by notification id: the load test's referee.
final class LoadTracker: Sendable {
    fileprivate struct State {
        var enqueued: [Int: ContinuousClock.Instant] = [:]
        /// Receipts of notifications whose create has not returned yet (a push can beat the
        /// API's answer to the load generator): their latencies are recorded at the create.
        var early: [Int: [ContinuousClock.Instant]] = [:]
        var receivedLatencies = LatencyRecorder()
        var notifiedLatencies = LatencyRecorder()
        /// Latencies since the sampler last took them.
        var interval = LatencyRecorder()
        var histogram = LatencyHistogram()
        var seen: Set<Delivery> = []
        var notified: Set<Delivery> = []
        var duplicates = 0
        var failures = 0
        var last: ContinuousClock.Instant?
    }

    fileprivate struct Delivery: Hashable {
        let id: Int
        let device: Int
    }

    struct Counts: Sendable {
        var sent: Int
        var delivered: Int
        var notified: Int
    }

    private let state = Mutex(State())
    /// Pushes expected at the devices (notifications × audience).
    let expected: Int

    init(expected: Int) { self.expected = expected }

    /// Notification `id` was created by a call that started `at` (latencies count from there).
    func enqueued(_ id: Int, at: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.enqueued[id] = at
            for receipt in state.early.removeValue(forKey: id) ?? [] { state.recordLatency((receipt - at).milliseconds) }
        }
    }

    func received(_ id: Int, device: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            if !state.seen.insert(Delivery(id: id, device: device)).inserted { state.duplicates += 1; return }
            if let at = state.enqueued[id] {
                state.recordLatency((now - at).milliseconds)
            } else {
                state.early[id, default: []].append(now)
            }
            state.last = now
        }
    }

    func notified(_ id: Int, device: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.notified.insert(Delivery(id: id, device: device)).inserted else { return }
            if let at = state.enqueued[id] { state.notifiedLatencies.record(ms: (now - at).milliseconds) }
            state.last = now
        }
    }

    func failed() { state.withLock { $0.failures += 1 } }

    var counts: Counts { state.withLock { Counts(sent: $0.enqueued.count, delivered: $0.seen.count, notified: $0.notified.count) } }
    var lastEvent: ContinuousClock.Instant? { state.withLock { $0.last } }

    /// The percentiles of the enqueue→device latencies recorded since the last call.
    func takeIntervalPercentiles() -> Percentiles? {
        state.withLock { state in
            defer { state.interval.reset() }
            return state.interval.percentiles
        }
    }

    func printProgress(elapsed: Duration) {
        let counts = counts
        let width = 30
        let filled = expected == 0 ? width : min(width, counts.delivered * width / expected)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = String(
            format: "\r[%@] sent %d  delivered %d  notified %d  %.1f s", bar, counts.sent, counts.delivered, counts.notified,
            elapsed.seconds)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func summary(elapsed: Duration) -> Summary {
        state.withLock { state in
            let seconds = max(elapsed.seconds, 0.001)
            return Summary(
                seconds: seconds, pushesExpected: expected, delivered: state.seen.count, notified: state.notified.count,
                deliveredPerSecond: Double(state.seen.count) / seconds, notifiedPerSecond: Double(state.notified.count) / seconds,
                lost: expected - state.seen.count, duplicated: state.duplicates, failed: state.failures,
                enqueueToDeviceMs: state.receivedLatencies.percentiles, enqueueToNotificationMs: state.notifiedLatencies.percentiles)
        }
    }

    var histogram: [HistogramBucket] { state.withLock { $0.histogram.buckets } }
}

private extension LoadTracker.State {
    mutating func recordLatency(_ ms: Double) {
        receivedLatencies.record(ms: ms)
        interval.record(ms: ms)
        histogram.add(ms)
    }
}
