import AsyncHTTPClient
public import Logging
public import RichPushQueue
import RichPushStorage
import RichPushWebhooks
import ServiceLifecycle

/// Builds a whole worker process: a job loop per partition running rich-push jobs (and whatever
/// `extraHandlers` registers: the bench and test job types), the queue gauges, the hub's expiry
/// sweeper when pushes go through the hub, and the webhook dispatchers: the composition root of
/// `richpush worker` and of the tests that run a worker.
public func buildWorker(configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies,
                        process: WorkerProcess.Configuration = WorkerProcess.Configuration(),
                        extraHandlers: (inout JobHandlers) -> Void = { _ in }, logger: Logger) -> WorkerProcess {
    let workers = buildJobLoops(configuration: configuration, dependencies: dependencies, extraHandlers: extraHandlers, logger: logger)
    let gauges = process.queueGaugeInterval.map { interval in
        workers.map { QueueGauges(queue: $0.queue, interval: interval, labelled: dependencies.keys.partitions > 1, logger: logger) }
    } ?? []
    // The hub's held pushes that expire are reported by the workers that use the hub.
    let usesHub = switch (configuration.adapter, configuration.otherPlatforms) {
    case (.simulated, _), (_, .simulated): true
    default: false
    }
    let sweeper = usesHub ? HubExpirySweeper(redis: dependencies.redis, prefix: dependencies.queue.prefix,
                                             ledger: RedisDeliveryLedger(redis: dependencies.redis, keys: dependencies.keys, retention: configuration.retention),
                                             logger: logger) : nil
    let webhooks = process.webhooks.map { buildWebhookServices(configuration: $0, dependencies: dependencies, logger: logger) } ?? []
    return WorkerProcess(workers: workers, gauges: gauges, hubSweeper: sweeper, webhooks: webhooks)
}

/// The dispatchers and the HTTP client they post with (the client's service first, so it closes
/// after them). One dispatcher per partition (each reads its partition's outbox; the first also
/// sends the retries).
private func buildWebhookServices(configuration: WebhookDispatcherConfiguration, dependencies: WorkerDependencies, logger: Logger) -> [any Service] {
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPWebhookTransport.configuration(connections: configuration.concurrency))
    var configuration = configuration
    var services: [any Service] = [HTTPClientService(client: client)]
    for partition in 0..<dependencies.keys.partitions {
        configuration.runsRetries = partition == 0
        services.append(WebhookDispatcher(store: RedisWebhookStore(redis: dependencies.redis, keys: dependencies.keys.inPartition(partition)),
                                          transport: HTTPWebhookTransport(client: client),
                                          locator: dependencies.locator, configuration: configuration, logger: logger))
    }
    return services
}
