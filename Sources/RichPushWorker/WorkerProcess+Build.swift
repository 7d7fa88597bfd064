import AsyncHTTPClient
import Hiredis
package import Logging
import RichPushCore
package import RichPushQueue
import RichPushStorage
import RichPushWebhooks
import ServiceLifecycle

/// Builds a whole worker process: a job loop per partition running rich-push jobs (and whatever
/// `extraHandlers` registers: the bench and test job types), the queue gauges (per partition, and
/// per app over all of them), the hub's expiry
/// sweeper when pushes go through the hub, and the webhook dispatchers: the composition root of
/// `richpush worker` and of the tests that run a worker.
package func buildWorker(
    configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies,
    process: WorkerProcess.Configuration = WorkerProcess.Configuration(),
    extraHandlers: (inout JobHandlers) -> Void = { _ in }, logger: Logger
) -> WorkerProcess {
    let (adapter, watcher) = buildLiveAdapter(configuration: configuration, dependencies: dependencies, logger: logger)
    let apps = buildAppAdapters(configuration: configuration, dependencies: dependencies)
    // One naming of apps for every per-app series of the process (bounded: see AppLabels).
    let appLabels = AppLabels()
    let workers = buildJobLoops(
        configuration: configuration, dependencies: dependencies, adapter: adapter, apps: apps, appLabels: appLabels,
        extraHandlers: extraHandlers, logger: logger)
    var gauges =
        process.queueGaugeInterval.map { interval in
            workers.map {
                QueueGauges(queue: $0.queue, interval: interval, labelled: dependencies.keys.partitions > 1, logger: logger) as any Service
            }
        } ?? []
    if let interval = process.queueGaugeInterval {
        gauges.append(AppQueueGauges(queues: workers.map(\.queue), interval: interval, labels: appLabels, logger: logger))
    }
    // The hub's held pushes that expire are reported by the workers that use the hub.
    let usesHub =
        switch (configuration.adapter, configuration.otherPlatforms) {
        case (.simulated, _), (_, .simulated): true
        default: false
        }
    let sweeper =
        usesHub
        ? HubExpirySweeper(
            redis: dependencies.redis, prefix: dependencies.queue.prefix,
            ledger: RedisDeliveryLedger(redis: dependencies.redis, keys: dependencies.keys, retention: configuration.retention),
            ledgers: { [redis = dependencies.redis, keys = dependencies.keys, retention = configuration.retention] app in
                RedisDeliveryLedger(redis: redis, keys: keys.forApp(app), retention: retention)
            }, logger: logger) : nil
    let webhooks = process.webhooks.map { buildWebhookServices(configuration: $0, dependencies: dependencies, logger: logger) } ?? []
    return WorkerProcess(
        workers: workers, gauges: gauges, hubSweeper: sweeper, webhooks: webhooks, credentialWatcher: watcher, appAdapters: apps)
}

/// The adapter the job loops send through: built from the configuration, or, when the worker
/// takes an app's credentials from the store, from those, replaced by the watcher on every change.
private func buildLiveAdapter(
    configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies,
    logger: Logger
) -> (any PushAdapter, AppCredentialWatcher?) {
    guard let apps = configuration.apps else { return (buildAdapter(configuration: configuration, dependencies: dependencies), nil) }
    // The credentials were opened at start; a signer they cannot make was refused then.
    let initial = (try? configuration.applying(apps.loaded.credentials)) ?? configuration
    let live = LivePushAdapter(buildAdapter(configuration: initial, dependencies: dependencies))
    let watcher = AppCredentialWatcher(
        store: apps.store, app: apps.app, subscriber: RedisSubscriber(configuration: dependencies.redisConfiguration, logger: logger),
        interval: apps.checkEvery, loaded: apps.loaded.version,
        apply: { credentials in
            live.replace(with: buildAdapter(configuration: try configuration.applying(credentials), dependencies: dependencies))
        },
        logger: logger)
    return (live, watcher)
}

/// The dispatchers and the HTTP client they post with (the client's service first, so it closes
/// after them). One dispatcher per partition (each reads its partition's outbox; the first also
/// sends the retries).
private func buildWebhookServices(
    configuration: WebhookDispatcherConfiguration, dependencies: WorkerDependencies, logger: Logger
) -> [any Service] {
    let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPWebhookTransport.configuration(connections: configuration.concurrency))
    var configuration = configuration
    var services: [any Service] = [HTTPClientService(client: client)]
    for partition in 0..<dependencies.keys.partitions {
        configuration.runsRetries = partition == 0
        services.append(
            WebhookDispatcher(
                store: RedisWebhookStore(redis: dependencies.redis, keys: dependencies.keys.inPartition(partition)),
                transport: HTTPWebhookTransport(client: client),
                locator: dependencies.locator, configuration: configuration, logger: logger))
    }
    return services
}
