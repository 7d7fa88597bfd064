package import RichPushQueue
package import RichPushWebhooks
package import ServiceLifecycle

/// Every long-lived service one worker process runs, as
/// ``buildWorker(configuration:dependencies:process:extraHandlers:logger:)`` builds them for
/// `richpush worker` and the tests.
///
/// The caller adds only what belongs to the process (its Redis connections, the provider clients,
/// the metrics server) and runs ``services`` in one `ServiceGroup`, which stops them in reverse
/// order: the job loops drain first, then the webhook dispatchers, the hub sweeper, the gauges.
package struct WorkerProcess: Sendable {
    /// What the process runs besides delivery itself.
    package struct Configuration: Sendable {
        /// The webhook dispatchers' settings (`consumer` is the worker's), or nil for none
        /// (`--no-webhooks`).
        package var webhooks: WebhookDispatcherConfiguration?
        /// How often the queue gauges are read, or nil for no gauges (no metrics server).
        package var queueGaugeInterval: Duration?

        package init(webhooks: WebhookDispatcherConfiguration? = nil, queueGaugeInterval: Duration? = nil) {
            self.webhooks = webhooks
            self.queueGaugeInterval = queueGaugeInterval
        }
    }

    /// One job loop per partition.
    package var workers: [JobWorker]
    /// When the process serves metrics: one ``QueueGauges`` per partition, and the
    /// ``AppQueueGauges`` over all of them.
    package var gauges: [any Service]
    /// When pushes go through the simulated hub: reports its held pushes that expire.
    package var hubSweeper: HubExpirySweeper?
    /// The webhook client's service, then one dispatcher per partition (empty without webhooks).
    package var webhooks: [any Service]
    /// When the worker sends as an app's stored credentials: keeps them current.
    var credentialWatcher: (any Service)?
    /// The other apps' adapters: closes their provider clients once the job loops have stopped.
    var appAdapters: (any Service)?

    package init(workers: [JobWorker], gauges: [any Service] = [], hubSweeper: HubExpirySweeper? = nil, webhooks: [any Service] = []) {
        self.workers = workers
        self.gauges = gauges
        self.hubSweeper = hubSweeper
        self.webhooks = webhooks
    }

    init(
        workers: [JobWorker], gauges: [any Service], hubSweeper: HubExpirySweeper?, webhooks: [any Service],
        credentialWatcher: (any Service)?,
        appAdapters: (any Service)?
    ) {
        self.init(workers: workers, gauges: gauges, hubSweeper: hubSweeper, webhooks: webhooks)
        self.credentialWatcher = credentialWatcher
        self.appAdapters = appAdapters
    }

    /// All of them, in the order they start (and the reverse of the order they stop).
    package var services: [any Service] {
        var services: [any Service] = appAdapters.map { [$0] } ?? []
        services += gauges
        if let credentialWatcher { services.append(credentialWatcher) }
        if let hubSweeper { services.append(hubSweeper) }
        return services + webhooks + workers as [any Service]
    }
}
