import Metrics

/// `richpush_webhook_attempts_total{outcome="delivered"|"retrying"|"dead"}`,
/// `richpush_webhook_events_total` (events put into deliveries) and
/// `richpush_webhook_deferred_total` (new deliveries queued behind a failing receiver untried).
final class WebhookMetrics: Sendable {
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
}
