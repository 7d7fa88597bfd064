import ArgumentParser
import RichPushWebhooks

/// `richpush worker`'s webhook delivery options.
struct WebhookOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: "Deliver status webhooks from this worker (its dispatcher joins the outbox's consumer group).")
    var webhooks = true
    @Option(help: "Seconds one webhook POST may take.") var webhookTimeout: Double = 10
    @Option(help: "Webhook POSTs in flight at once.") var webhookConcurrency = 16
    @Option(help: "Seconds before a failed webhook delivery's first retry; each next waits twice as long, up to --webhook-retry-max.")
    var webhookRetryBase: Double = 5
    @Option(help: "Most seconds between two retries of a webhook delivery.") var webhookRetryMax: Double = 3600
    @Option(help: "Hours a failing webhook delivery is retried before it goes to the webhook's dead letters.") var webhookRetryWindowHours:
        Double = 24

    func validate() throws {
        guard webhookTimeout > 0, webhookRetryBase > 0, webhookRetryMax >= webhookRetryBase else {
            throw ValidationError("--webhook-timeout and --webhook-retry-base must be positive, --webhook-retry-max at least the base")
        }
        guard (1...1024).contains(webhookConcurrency) else { throw ValidationError("--webhook-concurrency must be 1 to 1024") }
        guard webhookRetryWindowHours >= 0 else { throw ValidationError("--webhook-retry-window-hours must not be negative") }
    }

    /// The dispatchers' settings for a worker named `consumer`, or nil with --no-webhooks.
    func configuration(consumer: String) -> WebhookDispatcherConfiguration? {
        guard webhooks else { return nil }
        return WebhookDispatcherConfiguration(
            consumer: consumer, timeout: .milliseconds(Int(webhookTimeout * 1000)), concurrency: webhookConcurrency,
            retryBase: .milliseconds(Int(webhookRetryBase * 1000)), retryMax: .milliseconds(Int(webhookRetryMax * 1000)),
            retryWindow: .seconds(webhookRetryWindowHours * 3600))
    }
}
