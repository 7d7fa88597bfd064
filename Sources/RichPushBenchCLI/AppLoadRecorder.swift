import Foundation
import RichPushCommands
import RichPushReport
import Synchronization

/// What one app of `richpush bench fairness` created and what its devices received: the
/// create→device latency of each push (from the start of the create call to the push's arrival
/// at the simulated device, through the hub's Pub/Sub or apns-sim's forwarding: the moment the
/// adapter's provider accepted it, plus a Pub/Sub hop) and the pushes received per second.
final class AppLoadRecorder: Sendable {
    fileprivate struct State {
        var created: [Int: ContinuousClock.Instant] = [:]
        /// When each create call returned (the API's answer reached the load generator).
        var answered: [Int: ContinuousClock.Instant] = [:]
        /// Receipts whose create has not returned yet (a push can beat the API's answer).
        var early: [Int: ContinuousClock.Instant] = [:]
        var seen: Set<Int> = []
        var duplicates = 0
        var latencies = LatencyRecorder()
        /// Latencies of notifications created while another app's fan-out was being sent.
        var duringFanOut = LatencyRecorder()
        /// How long the create calls took (part of the latency: the API's answer, under load).
        var createCalls = LatencyRecorder()
        /// From the API's answer to the push's arrival (0 when the push came first): the part of
        /// the latency that the queue, the scheduler and the workers add.
        var afterAnswer = LatencyRecorder()
        var fanOutIDs: Set<Int> = []
        /// (seconds from the start at the create, milliseconds) of every notification, for the chart;
        /// only kept for apps that send at a set rate (a flood's would be hundreds of thousands).
        var samples: [[Double]] = []
        var perSecond: [Int] = []
        var lastReceipt: ContinuousClock.Instant?
    }

    let app: String
    let start: ContinuousClock.Instant
    let keepsSamples: Bool
    private let state = Mutex(State())

    init(app: String, start: ContinuousClock.Instant, keepsSamples: Bool) {
        self.app = app
        self.start = start
        self.keepsSamples = keepsSamples
    }

    /// Notification `id` was created by a call that started `at` and returned `returned`;
    /// `duringFanOut`: while a fan-out of another app was still being sent.
    func created(_ id: Int, at: ContinuousClock.Instant, returned: ContinuousClock.Instant, duringFanOut: Bool = false) {
        state.withLock { state in
            state.created[id] = at
            state.answered[id] = returned
            state.createCalls.record(ms: (returned - at) / .milliseconds(1))
            if duringFanOut { state.fanOutIDs.insert(id) }
            if let receipt = state.early.removeValue(forKey: id) {
                state.record(id, at: at, receipt: receipt, start: start, keep: keepsSamples)
            }
        }
    }

    /// A device received notification `id`.
    func received(_ id: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.seen.insert(id).inserted else { state.duplicates += 1; return }
            let second = max(0, Int((now - start) / .seconds(1)))
            if state.perSecond.count <= second { state.perSecond += Array(repeating: 0, count: second + 1 - state.perSecond.count) }
            state.perSecond[second] += 1
            state.lastReceipt = now
            if let at = state.created[id] {
                state.record(id, at: at, receipt: now, start: start, keep: keepsSamples)
            } else {
                state.early[id] = now
            }
        }
    }

    var createdCount: Int { state.withLock { $0.created.count } }
    var receivedCount: Int { state.withLock { $0.seen.count } }

    /// Every notification created was received.
    var isComplete: Bool { state.withLock { $0.seen.count >= $0.created.count } }

    /// The app's figures; `window`: the seconds its load ran, over which its throughput counts.
    func result(window: Double, roles: [String], rate: Int?, retried: Int) -> AppLoadResult {
        state.withLock { state in
            let inWindow = state.perSecond.prefix(Int(window.rounded(.up))).reduce(0, +)
            return AppLoadResult(
                app: app, roles: roles, rate: rate, created: state.created.count, received: state.seen.count,
                receivedInWindow: inWindow, window: window, throughput: Double(inWindow) / max(window, 0.001),
                undelivered: state.created.count - state.seen.count, duplicated: state.duplicates, retried: retried,
                latencyMs: state.latencies.percentiles, latencyDuringFanOutMs: state.duringFanOut.percentiles,
                createCallMs: state.createCalls.percentiles, afterAnswerMs: state.afterAnswer.percentiles,
                lastReceiptSeconds: state.lastReceipt.map { ($0 - start) / .seconds(1) },
                perSecond: state.perSecond, samples: state.samples)
        }
    }
}

private extension AppLoadRecorder.State {
    mutating func record(
        _ id: Int, at: ContinuousClock.Instant, receipt: ContinuousClock.Instant, start: ContinuousClock.Instant, keep: Bool
    ) {
        let ms = (receipt - at) / .milliseconds(1)
        latencies.record(ms: ms)
        if let answered = answered[id] { afterAnswer.record(ms: max(0, (receipt - answered) / .milliseconds(1))) }
        if fanOutIDs.contains(id) { duringFanOut.record(ms: ms) }
        if keep { samples.append([((at - start) / .seconds(1) * 1000).rounded() / 1000, (ms * 1000).rounded() / 1000]) }
    }
}

/// One app's figures in a phase of `richpush bench fairness` (JSON for scripts/bench-fairness.sh).
struct AppLoadResult: Codable, Sendable {
    var app: String
    /// flood, rate, fanout.
    var roles: [String]
    /// Notifications a second, for an app sending at a set rate.
    var rate: Int?
    var created: Int
    /// Pushes its devices received (one per notification: each goes to one device).
    var received: Int
    /// Received within the load's window (the first `window` seconds).
    var receivedInWindow: Int
    var window: Double
    /// `receivedInWindow / window`: pushes a second while the load ran.
    var throughput: Double
    /// Created and not received by the end of the drain.
    var undelivered: Int
    var duplicated: Int
    /// Creates answered 503 or 429 and sent again.
    var retried: Int
    /// Create→device, milliseconds.
    var latencyMs: Percentiles?
    /// Create→device of the notifications created while the fan-out was being sent.
    var latencyDuringFanOutMs: Percentiles?
    /// The create calls alone (a batch's for a flood), milliseconds.
    var createCallMs: Percentiles?
    /// From the create call's answer to the push's arrival (0 when the push came first).
    var afterAnswerMs: Percentiles?
    var lastReceiptSeconds: Double?
    /// Pushes received in each second from the start.
    var perSecond: [Int]
    /// [seconds from the start at the create, latency ms], for an app sending at a set rate.
    var samples: [[Double]]
}
