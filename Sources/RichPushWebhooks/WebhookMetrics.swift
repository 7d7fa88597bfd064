import Metrics

/// `richpush_webhook_attempts_total{outcome="delivered"|"retrying"|"dead"}`,
/// `richpush_webhook_events_total` (events put into deliveries) and
/// `richpush_webhook_deferred_total` (new deliveries queued behind a failing receiver untried),
/// and the gauges `richpush_webhook_outbox_entries` (events not yet handled: alert when it only
/// grows, e.g. every worker on `--no-webhooks`) and `richpush_webhook_retries_waiting`.
final class WebhookMetrics: Sendable {
    private let outbox = Gauge(label: "richpush_webhook_outbox_entries")
    private let retries = Gauge(label: "richpush_webhook_retries_waiting")
    private let delivered = Counter(label: "richpush_webhook_attempts_total", dimensions: [("outcome", "delivered")])
    private let retrying = Counter(label: "richpush_webhook_attempts_total", dimensions: [("outcome", "retrying")])
    private let dead = Counter(label: "richpush_webhook_attempts_total", dimensions: [("outcome", "dead")])
    private let events = Counter(label: "richpush_webhook_events_total")
    private let deferred = Counter(label: "richpush_webhook_deferred_total")

    func attempt(_ outcome: String) {
        switch outcome {
        case "delivered": delivered.increment()
        case "dead": dead.increment()
        default: retrying.increment()
        }
    }

    func queued(events count: Int) { if count > 0 { events.increment(by: count) } }
    func deferredDelivery() { deferred.increment() }

    func backlog(outbox entries: Int, retries waiting: Int) {
        outbox.record(entries)
        retries.record(waiting)
    }
}
