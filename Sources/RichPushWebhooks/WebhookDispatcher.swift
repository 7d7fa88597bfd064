package import Hiredis
package import Logging
import RichPushCore
package import RichPushStorage
import ServiceLifecycle
import Synchronization

/// Delivers the webhook outbox: every worker runs one, all in one consumer group of the outbox.
///
/// Each outbox entry becomes events for every webhook that wants them; each webhook's events go
/// in POSTs of at most ``WebhookDispatcherConfiguration/eventsPerDelivery``, signed. An entry is
/// acknowledged only once each of its deliveries was answered 2xx or is kept as a retry, so a
/// dispatcher that dies loses nothing (another takes its entries over) and a receiver gets every
/// event at least once. Retries back off exponentially until the retry window is over, then the
/// delivery goes to the webhook's dead letters. While a receiver is failing, its new deliveries
/// queue behind its retries untried, so one dead receiver does not hold up the others.
package final class WebhookDispatcher: Service, Sendable {
    let store: RedisWebhookStore
    let transport: any WebhookTransport
    let configuration: WebhookDispatcherConfiguration
    private let locator: RedisNodeLocator
    private let directory: WebhookDirectory
    /// The other apps' webhook stores and directories, made when one of their entries comes.
    private let apps = Mutex<[AppID: (store: RedisWebhookStore, directory: WebhookDirectory)]>([:])
    private let logger: Logger
    private let metrics = WebhookMetrics()
    private let stopping = Atomic<Bool>(false)
    /// Webhook id → until when (ms) its new deliveries wait untried, after a failed attempt.
    private let failing = Mutex<[String: Int64]>([:])

    /// `redis`: the configuration of the reader's own connection (its timeout is raised above the block time).
    package convenience init(
        store: RedisWebhookStore, transport: any WebhookTransport, redis: RedisConfiguration,
        configuration: WebhookDispatcherConfiguration, logger: Logger = Logger(label: "richpush.webhooks")
    ) {
        self.init(store: store, transport: transport, locator: .standalone(redis), configuration: configuration, logger: logger)
    }

    /// `locator` finds the node of the store's partition's outbox for the reader's own connection.
    package init(
        store: RedisWebhookStore, transport: any WebhookTransport, locator: RedisNodeLocator,
        configuration: WebhookDispatcherConfiguration, logger: Logger = Logger(label: "richpush.webhooks")
    ) {
        self.store = store
        self.transport = transport
        self.configuration = configuration
        self.locator = locator
        self.directory = WebhookDirectory(store: store, refresh: configuration.registryRefresh)
        self.logger = logger
    }

    /// Short, so a worker's shutdown does not wait for a read (an idle dispatcher makes 4 reads a second).
    static let block = Duration.milliseconds(250)
    static let gaugeInterval = Duration.seconds(5)

    package func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.outboxLoop() }
                if self.configuration.runsRetries { group.addTask { await self.retryLoop() } }
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
        }
    }

    /// Stops both loops after what they are doing (for embedding without a ServiceGroup).
    package func stop() { stopping.store(true, ordering: .relaxed) }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    // MARK: - The outbox

    private func outboxLoop() async {
        let reader = RedisReaderConnection(
            locator: locator, key: store.keys.webhookOutbox, timeout: Self.block + .seconds(5), suffix: "webhooks", logger: logger)
        var groupReady = false
        var lastReclaim = ContinuousClock.now - configuration.reclaimIdle
        while !isStopping {
            do {
                if !groupReady {
                    try await store.ensureOutboxGroup()
                    groupReady = true
                }
                var entries: [WebhookOutboxEntry] = []
                if ContinuousClock.now - lastReclaim >= configuration.reclaimIdle / 2 {
                    entries = try await store.reclaimOutbox(
                        consumer: configuration.consumer, idle: configuration.reclaimIdle, count: configuration.readCount)
                    lastReclaim = .now
                }
                if entries.isEmpty {
                    entries = try await store.readOutbox(
                        on: try await reader.connection(), consumer: configuration.consumer, count: configuration.readCount,
                        block: Self.block)
                }
                if !entries.isEmpty { try await dispatch(entries) }
            } catch {
                await reader.failed(error)
                // The group goes with the outbox (FLUSHDB, a new Redis): make it again.
                if "\(error)".contains("NOGROUP") { groupReady = false }
                guard !isStopping else { break }
                logger.warning("webhook outbox: \(error); trying again in 1 s")
                try? await Task.sleep(for: .seconds(1))
            }
        }
        await reader.close()
    }

    /// Turns entries into deliveries, attempts each once, and acknowledges the entries when every
    /// delivery is done or kept for a retry; a Redis failure leaves them for a redelivery.
    func dispatch(_ entries: [WebhookOutboxEntry]) async throws {
        // Each app's entries go to its own webhooks (an app's events never reach another's).
        var byApp: [AppID: [WebhookOutboxEntry]] = [:]
        for entry in entries { byApp[entry.app, default: []].append(entry) }
        for (app, entries) in byApp.sorted(by: { $0.key < $1.key }) {
            let (store, directory) = stores(of: app)
            try await dispatch(entries, store: store, directory: directory)
        }
        try await store.finishOutbox(entries.map(\.streamID))
    }

    /// The store and directory of `app`'s webhooks.
    private func stores(of app: AppID) -> (store: RedisWebhookStore, directory: WebhookDirectory) {
        if app == store.keys.app { return (store, directory) }
        return apps.withLock { apps in
            if let stores = apps[app] { return stores }
            let store = store.forApp(app)
            let stores = (store, WebhookDirectory(store: store, refresh: configuration.registryRefresh))
            apps[app] = stores
            return stores
        }
    }

    /// One app's entries: their deliveries, each attempted once (or kept as a retry).
    private func dispatch(_ entries: [WebhookOutboxEntry], store: RedisWebhookStore, directory: WebhookDirectory) async throws {
        var webhooks = try await directory.current()
        // An entry exists only because a webhook wanted it: none matching means a stale copy.
        let unmatched = entries.contains { entry in
            guard let type = entry.type else { return false }
            return !webhooks.values.contains { $0.wants(type, creator: entry.creator) }
        }
        if unmatched {
            webhooks = try await directory.current(fresh: true)
        }
        var perWebhook: [String: [WebhookEvents.Event]] = [:]
        for entry in entries {
            guard let type = entry.type else { continue }
            let targets = webhooks.values.filter { $0.wants(type, creator: entry.creator) }
            guard !targets.isEmpty else { continue }
            let events = WebhookEvents.events(of: entry)
            for webhook in targets { perWebhook[webhook.id, default: []] += events }
        }
        let now = RedisWebhookStore.nowMilliseconds()
        var deliveries: [(webhook: Webhook, delivery: WebhookDelivery)] = []
        for (id, events) in perWebhook {
            guard let webhook = webhooks[id] else { continue }
            for start in stride(from: 0, to: events.count, by: configuration.eventsPerDelivery) {
                let chunk = Array(events[start..<min(events.count, start + configuration.eventsPerDelivery)])
                let deliveryID = WebhookEvents.newDeliveryID()
                let body = try WebhookEvents.body(webhook: id, delivery: deliveryID, events: chunk)
                deliveries.append(
                    (
                        webhook,
                        WebhookDelivery(
                            id: deliveryID, webhook: id, body: body, attempts: 0, firstAttempt: now,
                            events: chunk.count, lastError: "")
                    ))
            }
            metrics.queued(events: events.count)
        }
        for start in stride(from: 0, to: deliveries.count, by: configuration.concurrency) {
            let slice = deliveries[start..<min(deliveries.count, start + configuration.concurrency)]
            try await withThrowingDiscardingTaskGroup { group in
                for (webhook, delivery) in slice {
                    group.addTask { try await self.attempt(delivery, to: webhook, fromOutbox: true, store: store) }
                }
            }
        }
    }

    // MARK: - Retries

    private func retryLoop() async {
        var lastGauges = ContinuousClock.now - Self.gaugeInterval
        while !isStopping {
            do {
                if ContinuousClock.now - lastGauges >= Self.gaugeInterval {
                    metrics.backlog(outbox: try await store.outboxLength(), retries: try await store.retryCount())
                    lastGauges = .now
                }
                // The default app's retries, then those of each app that has had a webhook.
                var attempted = 0
                for app in [store.keys.app] + (try await store.appsWithWebhooks()) {
                    attempted += try await retryDue(stores(of: app))
                }
                if attempted == 0 { try? await Task.sleep(for: configuration.retryPoll) }
            } catch {
                logger.warning("webhook retries: \(error); trying again in 1 s")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Attempts the deliveries of one app's webhooks whose time has come; returns how many.
    private func retryDue(_ stores: (store: RedisWebhookStore, directory: WebhookDirectory)) async throws -> Int {
        let (store, directory) = stores
        let due = try await store.claimDueDeliveries(
            now: RedisWebhookStore.nowMilliseconds(), count: configuration.concurrency * 2,
            lease: configuration.timeout + .seconds(30))
        guard !due.isEmpty else { return 0 }
        let webhooks = try await directory.current(fresh: true)
        try await withThrowingDiscardingTaskGroup { group in
            for delivery in due {
                group.addTask {
                    guard let webhook = webhooks[delivery.webhook] else { return try await store.discard(delivery) }
                    try await self.attempt(delivery, to: webhook, fromOutbox: false, store: store)
                }
            }
        }
        return due.count
    }

    // MARK: - One attempt

    /// POSTs the delivery once, signed now, and records the attempt with what follows from it.
    private func attempt(_ delivery: WebhookDelivery, to webhook: Webhook, fromOutbox: Bool, store: RedisWebhookStore) async throws {
        let now = RedisWebhookStore.nowMilliseconds()
        if fromOutbox, let until = failing.withLock({ $0[webhook.id] }), until > now {
            // The receiver is failing: wait behind its retries rather than fail once more.
            metrics.deferredDelivery()
            return try await store.scheduleRetry(delivery, due: until, window: configuration.retryWindow)
        }
        let timestamp = now / 1000
        let headers: [(String, String)] = [
            ("Content-Type", "application/json"), ("User-Agent", "RichPush-Webhooks/1"),
            ("X-RichPush-Webhook-Id", webhook.id), ("X-RichPush-Delivery-Id", delivery.id),
            (WebhookSignature.timestampHeader, String(timestamp)),
            (WebhookSignature.signatureHeader, WebhookSignature.sign(secret: webhook.secret, timestamp: timestamp, body: delivery.body)),
        ]
        let clock = ContinuousClock.now
        let response = await transport.post(url: webhook.url, headers: headers, body: delivery.body, timeout: configuration.timeout)
        let elapsed = ContinuousClock.now - clock
        let number = delivery.attempts + 1
        let result: RedisWebhookStore.AttemptResult
        let outcome: WebhookAttempt.Outcome
        if response.isSuccess {
            (result, outcome) = (.delivered, .delivered)
            failing.withLock { _ = $0.removeValue(forKey: webhook.id) }
        } else if now - delivery.firstAttempt >= Int64(configuration.retryWindow.milliseconds) {
            (result, outcome) = (.dead, .dead)
            logger.warning(
                "webhook delivery dead after \(number) attempts",
                metadata: [
                    "webhook": "\(webhook.id)", "delivery": "\(delivery.id)",
                    "error": "\(response.error ?? "")",
                ])
        } else {
            let due = now + Int64(configuration.backoff(afterAttempts: number).milliseconds)
            (result, outcome) = (.retry(due: due, window: configuration.retryWindow), .retrying)
            failing.withLock { $0[webhook.id] = max($0[webhook.id] ?? 0, due) }
        }
        metrics.attempt(outcome.rawValue)
        let record = WebhookAttempt(
            deliveryId: delivery.id, attempt: number, at: UTCTimestamp.iso8601(milliseconds: now), status: response.status,
            durationMs: elapsed.milliseconds, events: delivery.events, outcome: outcome, error: response.error)
        try await store.record(record, of: delivery, result: result)
    }
}
