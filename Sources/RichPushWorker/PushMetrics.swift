import Metrics
import RichPushCore
import Synchronization

/// The push stage's series: `richpush_pushes_total{adapter,outcome}`,
/// `richpush_duplicates_suppressed_total`, `richpush_failure_counts_lost_total`, `richpush_render_seconds`,
/// `richpush_send_seconds{adapter}` (one batch, through every route) and
/// `richpush_enqueue_to_device_seconds{adapter}` (from the notification's creation to the platform
/// accepting the push). `adapter` is the route that carried the push (`apns`, `fcm`, `simulated`),
/// for `send_seconds` the worker's whole adapter. Handles are made once and kept.
final class PushMetrics: Sendable {
    struct Series: Hashable {
        let adapter: String
        let outcome: String
    }

    let adapter: String
    private let render = Timer(label: "richpush_render_seconds")
    private let send: Timer
    private let toDevice = Mutex<[String: Timer]>([:])
    private let duplicates = Counter(label: "richpush_duplicates_suppressed_total")
    private let lostFailures = Counter(label: "richpush_failure_counts_lost_total")
    private let outcomes = Mutex<[Series: Counter]>([:])
    private let appOutcomes = Mutex<[Series: Counter]>([:])

    /// Distinct apps named in `richpush_app_pushes_total` by this process; the apps seen after
    /// them are counted as `other`, so the series stay bounded whatever the number of apps.
    static let namedApps = 100

    init(adapter: String) {
        self.adapter = adapter
        send = Timer(label: "richpush_send_seconds", dimensions: [("adapter", adapter)])
    }

    func rendered(in elapsed: Duration) { render.recordNanoseconds(elapsed.nanoseconds) }

    func sent(_ count: Int, in elapsed: Duration) {
        guard count > 0 else { return }
        send.recordNanoseconds(elapsed.nanoseconds)
    }

    /// `richpush_failure_counts_lost_total`: failed pushes whose count by reason could not be
    /// written (the console's failed/s by reason shows too few by this many).
    func lostFailureCounts(_ count: Int) {
        if count > 0 { lostFailures.increment(by: count) }
    }

    func suppressed(_ count: Int) {
        if count > 0 { duplicates.increment(by: count) }
    }

    /// One push reached the platform; `createdAt` is the notification's creation, ms since 1970.
    /// The timer of `richpush_enqueue_to_device_seconds{adapter}`: a push reached the platform
    /// `now - createdAt` ms after its notification was created (ms since 1970).
    func toDevice(adapter: String) -> Timer {
        toDevice.withLock { timers in
            if let timer = timers[adapter] { return timer }
            let timer = Timer(label: "richpush_enqueue_to_device_seconds", dimensions: [("adapter", adapter)])
            timers[adapter] = timer
            return timer
        }
    }

    /// `richpush_app_pushes_total{app,outcome}`: pushes by app (the first ``namedApps`` apps this
    /// process sends for by name, the others as `other`) and outcome.
    func count(app: AppID, outcome: String, by amount: Int) {
        guard amount > 0 else { return }
        let counter = appOutcomes.withLock { counters in
            let named = counters.keys.contains { $0.adapter == app.rawValue } || Set(counters.keys.map(\.adapter)).count < Self.namedApps
            let series = Series(adapter: named ? app.rawValue : "other", outcome: outcome)
            if let counter = counters[series] { return counter }
            let counter = Counter(label: "richpush_app_pushes_total", dimensions: [("app", series.adapter), ("outcome", outcome)])
            counters[series] = counter
            return counter
        }
        counter.increment(by: amount)
    }

    func count(_ series: Series, by amount: Int) {
        guard amount > 0 else { return }
        let counter = outcomes.withLock { counters in
            if let counter = counters[series] { return counter }
            let counter = Counter(label: "richpush_pushes_total", dimensions: [("adapter", series.adapter), ("outcome", series.outcome)])
            counters[series] = counter
            return counter
        }
        counter.increment(by: amount)
    }
}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
