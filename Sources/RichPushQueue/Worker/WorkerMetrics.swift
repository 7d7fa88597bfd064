import Metrics
import Synchronization

/// The job loop's series, through swift-metrics (Prometheus when the process bootstraps it,
/// no-ops otherwise): `richpush_jobs_total{type,outcome}`, `richpush_jobs_running`,
/// `richpush_job_wait_seconds` (enqueue → start), `richpush_job_duration_seconds{type}` and
/// `richpush_app_jobs_done_total{app}` (jobs done by app, named as ``AppLabels`` says).
/// Handles are made once per label set and kept, so a job costs no registry lookup.
final class WorkerMetrics: Sendable {
    enum Outcome: String, Sendable {
        case completed, retried
        case deadLettered = "dead_lettered"
        case dropped
    }

    private let running = Gauge(label: "richpush_jobs_running")
    private let wait = Timer(label: "richpush_job_wait_seconds")
    private let inFlight = Atomic<Int>(0)
    private let counters = Mutex<[String: Counter]>([:])
    private let durations = Mutex<[String: Timer]>([:])
    private let appLabels: AppLabels
    private let done = Mutex<[String: Counter]>([:])

    init(appLabels: AppLabels) {
        self.appLabels = appLabels
    }

    func started(_ jobs: [Job]) {
        let now = JobQueue.nowMilliseconds()
        for job in jobs { wait.recordMilliseconds(max(0, now - job.enqueuedAt)) }
        running.record(inFlight.add(jobs.count, ordering: .relaxed).newValue)
    }

    /// `count` jobs of `type` ran in `elapsed` (a batch counts its time once per job).
    func finished(_ count: Int, type: String, after elapsed: Duration) {
        running.record(inFlight.subtract(count, ordering: .relaxed).newValue)
        let timer = durations.withLock { timers in
            if let timer = timers[type] { return timer }
            let timer = Timer(label: "richpush_job_duration_seconds", dimensions: [("type", type)])
            timers[type] = timer
            return timer
        }
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        for _ in 0..<count { timer.recordNanoseconds(nanoseconds) }
    }

    func count(_ type: String, _ outcome: Outcome, by amount: Int = 1) {
        let key = type + "\u{0}" + outcome.rawValue
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "richpush_jobs_total", dimensions: [("type", type), ("outcome", outcome.rawValue)])
            counters[key] = counter
            return counter
        }
        counter.increment(by: amount)
    }

    /// A job of `app` (an app; jobs that name none: ``JobRequest/sharedApp``) succeeded.
    func countDone(app: String?) {
        let label = appLabels.label(app ?? JobRequest.sharedApp)
        let counter = done.withLock { counters in
            if let counter = counters[label] { return counter }
            let counter = Counter(label: "richpush_app_jobs_done_total", dimensions: [("app", label)])
            counters[label] = counter
            return counter
        }
        counter.increment()
    }
}
