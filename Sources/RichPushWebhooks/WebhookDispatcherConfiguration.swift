/// Everything `richpush worker` can be told about delivering webhooks, with production defaults.
package struct WebhookDispatcherConfiguration: Sendable {
    /// This dispatcher's name in the outbox's consumer group.
    package var consumer: String
    /// How long one POST may take.
    package var timeout: Duration
    /// POSTs in flight at once.
    package var concurrency: Int
    /// The first retry's delay; each next one doubles, up to ``retryMax``, with ±20 % jitter.
    package var retryBase: Duration
    package var retryMax: Duration
    /// How long after its first attempt a delivery is retried before it goes to the dead letters.
    package var retryWindow: Duration
    /// Most events in one POST.
    package var eventsPerDelivery: Int
    /// Outbox entries read at once.
    package var readCount: Int
    /// An outbox entry read by a dispatcher that has not finished it this long is taken over.
    package var reclaimIdle: Duration
    /// How often the list of webhooks is read again (a new webhook gets events from then on).
    package var registryRefresh: Duration
    /// How often due retries are looked for when none were due.
    package var retryPoll: Duration
    /// Whether this dispatcher also sends due retries (shared by all partitions): a worker's
    /// dispatchers of partitions other than the first leave them to the first.
    package var runsRetries = true

    package init(
        consumer: String, timeout: Duration = .seconds(10), concurrency: Int = 16, retryBase: Duration = .seconds(5),
        retryMax: Duration = .seconds(3600), retryWindow: Duration = .seconds(86400), eventsPerDelivery: Int = 100,
        readCount: Int = 256, reclaimIdle: Duration = .seconds(60), registryRefresh: Duration = .seconds(1),
        retryPoll: Duration = .milliseconds(250)
    ) {
        self.consumer = consumer
        self.timeout = timeout
        self.concurrency = max(1, concurrency)
        self.retryBase = retryBase
        self.retryMax = max(retryBase, retryMax)
        self.retryWindow = retryWindow
        self.eventsPerDelivery = max(1, eventsPerDelivery)
        self.readCount = max(1, readCount)
        // Longer than a batch can take (its POSTs run at once, each within the timeout).
        self.reclaimIdle = max(reclaimIdle, timeout * 3)
        self.registryRefresh = registryRefresh
        self.retryPoll = retryPoll
    }

    /// The delay before attempt `attempts + 1`, after `attempts` failed ones.
    func backoff(afterAttempts attempts: Int) -> Duration {
        let exponent = min(max(0, attempts - 1), 30)
        let delay = min(retryMax, retryBase * (1 << exponent))
        return delay * Double.random(in: 0.8...1.2)
    }
}
