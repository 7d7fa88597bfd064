public import ArgumentParser
import Foundation
package import Hiredis
public import Logging
import RichPushAPNS
import RichPushAdapters
package import RichPushCore
import RichPushFCM
import RichPushHTTP2
package import RichPushQueue
import RichPushStorage
import RichPushWorker
import ServiceLifecycle

/// `richpush worker`: joins the consumer group and runs jobs until SIGTERM/SIGINT.
package struct WorkerCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Take jobs from the queue and run them; scale by starting more, on any host.",
        discussion: """
            Each worker joins the consumer group under a unique name (host:pid:random). SIGTERM or \
            SIGINT stops reading, lets running jobs finish (up to --drain-timeout), flushes \
            acknowledgements, releases the rest for immediate reclaim by other workers, and exits 0.
            Jobs of a worker that dies are reclaimed by the others after --visibility-timeout.
            """)

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @OptionGroup var apns: APNSOptions
    @OptionGroup var fcm: FCMOptions
    @OptionGroup var webPush: WebPushOptions
    @OptionGroup var webhookOptions: WebhookOptions
    @OptionGroup var kek: KeyEncryptionOptions

    @Option(help: "Jobs run at once by this worker.") var concurrency = 32
    @Option(help: "Most jobs fetched per read.") var batchSize = 64
    @Option(
        help:
            "Fair scheduling: most jobs run as one batch while several apps share this worker, so each app's jobs hold their slots alike (0: whole reads)."
    ) var fairUnitSize = 16
    @Option(
        help:
            "Fair scheduling: job slots fan-out sub-jobs never take, kept for notifications to one or a few devices so they start while a fan-out fills the worker (0: none)."
    ) var nowSlots = 8
    @Option(
        help:
            "Milliseconds the next read waits after one that found fewer jobs than it asked for, so more gather and run as one batch (0: off)."
    ) var lingerMs: Double = 5
    @Option(help: "Seconds running jobs get to finish on shutdown before they are released.") var drainTimeout: Double = 10
    @Option(help: "Consumer name in the group (default host:pid:random).") var consumer: String?
    @Option(help: "Seconds between reclaiming abandoned jobs and promoting due retries.") var maintenanceInterval: Double = 0.5
    @Option(
        help: """
            Push adapters, comma-separated: simulated (alias hub: the Redis Pub/Sub hub, for every platform without an adapter \
            of its own), apns (iOS devices through Apple or a local apns-sim; see --apns-*), fcm (Android devices through FCM \
            or a local fcm-sim; see --fcm-*), webpush (browsers through their push services or a local webpush-sim; see --webpush-*). \
            E.g. apns,fcm,webpush in production, apns,fcm,hub to keep the hub for the rest. \
            Pushes to a platform with no adapter fail, naming it.
            """)
    var adapter: AdapterSet = AdapterSet(kinds: [.simulated])
    @Option(
        help:
            "For notifications that name no delivery (nor their app a defaultDelivery): silent, the seed's content-available push; alert, mutable-content with a signed media URL; auto, chosen per device (--auto-*)."
    )
    var pushMode: PushRenderer.Mode = .silent
    @Option(help: "Base URL of the API, for the media URL of alert-mode pushes.") var apiBaseURL = "http://127.0.0.1:8080"
    @Option(help: "auto delivery: silent pushes an hour an iPhone is estimated to take (Apple: two or three).")
    var autoBudgetPerHour: Double = 3
    @Option(help: "auto delivery: silent pushes an iPhone is estimated to take at once.") var autoBudgetBurst: Double = 3
    @Option(help: "auto delivery: seconds an Android app may take to fetch a silent push before it gets alerts.")
    var autoAnswerWindow: Double = 30
    @Option(help: "Installations per fan-out sub-job; larger targets are split for many workers.") var fanOutBatch = 500
    @Option(
        help:
            "Most pushes one batch of jobs holds at once; a read of many fan-out sub-jobs is sent in rounds of this many, which bounds the worker's memory."
    ) var maxPushesPerRound = 1_000
    @Option(
        help:
            "Pushes a minute for notifications that set no throttlePerMinute of their own, so devices fetch the payload at most at that rate (0: no limit)."
    )
    var throttlePerMinute = 0
    @Option(help: "Hours at most the simulated hub holds a push for an offline device (its ttl, when shorter).") var holdHours: Double = 24
    @Option(help: "Days notification records are kept (must match the API's --retention-days).") var retentionDays: Double = 7
    @Option(help: "Serve Prometheus metrics on this port (GET /metrics); none when not given.") var metricsPort: Int?
    @Option(help: "Address the metrics server listens on (0.0.0.0 for a scraper on another host).") var metricsHost = "127.0.0.1"
    @Option(help: "Seconds between reads of the queue's lag, pending, delayed and dead-letter gauges.") var queueMetricsInterval: Double = 5
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: Logger.Level = .info

    package init() {}

    package func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        guard (0...1000).contains(lingerMs) else { throw ValidationError("--linger-ms must be between 0 and 1000") }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be between 1 and 10000") }
        guard (0...10_000).contains(fairUnitSize) else { throw ValidationError("--fair-unit-size must be between 0 and 10000") }
        guard nowSlots >= 0 else { throw ValidationError("--now-slots must not be negative") }
        guard drainTimeout >= 0 else { throw ValidationError("--drain-timeout must not be negative") }
        guard maintenanceInterval > 0 else { throw ValidationError("--maintenance-interval must be positive") }
        guard (1...1_000_000).contains(maxPushesPerRound) else { throw ValidationError("--max-pushes-per-round must be 1 to 1000000") }
        guard fanOutBatch >= 1 else { throw ValidationError("--fan-out-batch must be at least 1") }
        guard (0...10_000_000).contains(throttlePerMinute) else { throw ValidationError("--throttle-per-minute must be 0 to 10000000") }
        guard holdHours > 0, retentionDays > 0 else { throw ValidationError("--hold-hours and --retention-days must be positive") }
        guard autoAnswerWindow.isFinite, autoAnswerWindow > 0, autoAnswerWindow <= 3600 else {
            throw ValidationError("--auto-answer-window must be more than 0 and at most 3600 seconds")
        }
        if let problem = AutoDelivery(burst: autoBudgetBurst, perHour: autoBudgetPerHour).problem {
            throw ValidationError("--auto-budget-per-hour / --auto-budget-burst: \(problem)")
        }
        if fcm.fcmCredentials != nil && !adapter.kinds.contains(.fcm) {
            throw ValidationError("--fcm-credentials is for --adapter fcm (e.g. --adapter apns,fcm)")
        }
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0 to 65535") }
        guard queueMetricsInterval >= 0.1 else { throw ValidationError("--queue-metrics-interval must be at least 0.1 seconds") }
    }

    package func run() async throws {
        try await run { _, _ in }
    }

    /// Runs the worker with the job types `extraHandlers` registers beside the rich-push ones
    /// (`richpush-bench worker`: the benchmark and test types), on the process's Redis client.
    package func run(extraHandlers: @escaping (inout JobHandlers, any RedisClient) -> Void) async throws {
        LogSetup.bootstrap(level: logLevel)
        let registry = metricsPort.map { _ in MetricsSetup.bootstrap() }
        let logger = Logger(label: "richpush.worker")
        let redisConfiguration = try redis.configuration(clientName: "richpush-worker")
        let backend = try redis.backend(clientName: "richpush-worker", connections: 2, logger: logger)
        let pool = backend.client
        try await SchemaCheck.atStart(redis: pool, keys: queue.storageKeys(redis), logger: logger)
        var workerConfiguration = JobWorkerConfiguration(
            concurrency: concurrency, batchSize: batchSize,
            drainTimeout: .milliseconds(Int(drainTimeout * 1000)),
            maintenanceInterval: .milliseconds(Int(maintenanceInterval * 1000)))
        if let consumer { workerConfiguration.consumer = consumer }
        workerConfiguration.fairUnitSize = fairUnitSize
        workerConfiguration.nowSlots = nowSlots
        workerConfiguration.linger = .microseconds(Int(lingerMs * 1000))
        let apps = try await Self.appCredentials(kek: kek, redis: pool, prefix: queue.prefix, logger: logger)
        await Self.applyStoredScheduling(redis: pool, queue: queue, logger: logger)
        var apnsClients: [HTTP2Client] = []
        var pushAdapter = RichPushWorkerConfiguration.Adapter.none
        if adapter.kinds.contains(.apns) {
            let settings = try apns.settings(stored: apps?.loaded.credentials.apns)
            pushAdapter = .apns(settings)
            apnsClients = settings.clients
        } else if adapter.kinds.contains(.simulated) {
            pushAdapter = .simulated(holdFor: .seconds(holdHours * 3600))
        }
        let fcmSettings = adapter.kinds.contains(.fcm) ? try fcm.settings(stored: apps?.loaded.credentials.fcm) : nil
        if let fcmSettings {
            try await Self.checkTokenEndpoint(fcmSettings, redis: backend, prefix: queue.configuration.prefix, logger: logger)
        }
        let webPushSettings = adapter.kinds.contains(.webpush) ? try webPush.settings(stored: apps?.loaded.credentials.webPush) : nil
        var configuration = RichPushWorkerConfiguration(
            worker: workerConfiguration, adapter: pushAdapter,
            renderer: PushRenderer(mode: pushMode, apiBaseURL: apiBaseURL),
            fanOutBatch: fanOutBatch, retention: .seconds(retentionDays * 86400),
            // A push's lease lasts as long as its job's delivery: a worker that dies holding
            // both has its pushes resent when its job is reclaimed, not later.
            leaseDuration: .milliseconds(Int(queue.visibilityTimeout * 1000)),
            fcm: fcmSettings,
            otherPlatforms: adapter.kinds.contains(.simulated) ? .simulated(holdFor: .seconds(holdHours * 3600)) : .refused)
        configuration.apps = apps
        configuration.webPush = webPushSettings
        configuration.defaultThrottlePerMinute = throttlePerMinute
        configuration.maxPushesPerRound = maxPushesPerRound
        configuration.autoDelivery = AutoDelivery(
            burst: autoBudgetBurst, perHour: autoBudgetPerHour, answerWindow: .milliseconds(Int64((autoAnswerWindow * 1000).rounded())))
        let dependencies = WorkerDependencies(
            redis: pool, redisConfiguration: redisConfiguration, keys: queue.storageKeys(redis), queue: queue.configuration,
            locator: backend.locator)
        let process = WorkerProcess.Configuration(
            webhooks: webhookOptions.configuration(consumer: workerConfiguration.consumer),
            queueGaugeInterval: metricsPort == nil ? nil : .seconds(queueMetricsInterval))
        let worker = buildWorker(
            configuration: configuration, dependencies: dependencies, process: process,
            extraHandlers: { extraHandlers(&$0, pool) }, logger: logger)
        // A ServiceGroup stops its services in reverse order: the worker drains first, and the
        // metrics server answers until the worker is done.
        var services: [any Service] = [backend.service]
        services += apnsClients as [any Service]
        if let fcm = configuration.fcm {
            services.append(HTTPClientService(client: fcm.http))
            services.append(fcm.client)
        }
        if let webPushSettings {
            services.append(HTTPClientService(client: webPushSettings.http))
            if let connections = webPushSettings.connections { services.append(ShutdownOnStop { connections.shutdown() }) }
        }
        if let registry, let metricsPort {
            services.append(MetricsSetup.server(registry: registry, host: metricsHost, port: metricsPort, logger: logger))
        }
        services += worker.services
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}

extension WorkerCommand {
    /// Gets the fleet's FCM access token before taking jobs, so a service account the token
    /// endpoint refuses, or an endpoint that cannot be reached, stops the worker at start with
    /// the reason instead of failing every Android push. (It is the shared token: a fleet of N
    /// workers still makes one exchange.) Redis not answering yet is only a warning: the worker
    /// waits for Redis as it always does.
    static func checkTokenEndpoint(
        _ settings: RichPushWorkerConfiguration.FCMSettings, redis: RedisBackend, prefix: String, logger: Logger
    ) async throws {
        do {
            _ = try await settings.accessToken(redis: redis, prefix: prefix).current()
        } catch let error as FCMConfigurationError {
            try? await settings.http.shutdown()
            settings.client.shutdown()
            await redis.close()
            throw CLIError("FCM: \(error)")
        } catch {
            logger.warning("cannot get the FCM access token yet", metadata: ["error": "\(error)"])
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension PushRenderer.Mode: ExpressibleByArgument {}

/// The push adapters `richpush worker --adapter` names, comma-separated.
struct AdapterSet: ExpressibleByArgument {
    enum Kind: String, CaseIterable {
        case simulated, apns, fcm, webpush
    }

    let kinds: Set<Kind>

    init(kinds: Set<Kind>) {
        self.kinds = kinds
    }

    init?(argument: String) {
        var kinds = Set<Kind>()
        for name in argument.split(separator: ",", omittingEmptySubsequences: false) {
            let name = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let kind = name == "hub" ? .simulated : Kind(rawValue: name) else { return nil }
            kinds.insert(kind)
        }
        guard !kinds.isEmpty else { return nil }
        self.kinds = kinds
    }

    static var allValueStrings: [String] { ["simulated", "hub", "apns", "fcm", "webpush", "apns,fcm", "apns,fcm,webpush", "apns,fcm,hub"] }
    var defaultValueDescription: String { kinds.map(\.rawValue).sorted().joined(separator: ",") }
}
