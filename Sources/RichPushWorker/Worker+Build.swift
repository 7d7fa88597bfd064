package import AsyncHTTPClient
package import Hiredis
import Logging
package import RichPushAPNS
import RichPushAdapters
package import RichPushCore
package import RichPushFCM
package import RichPushHTTP2
package import RichPushQueue
package import RichPushStorage
import RichPushWebPush

/// Everything `richpush worker` can be told about delivery, with production defaults.
package struct RichPushWorkerConfiguration: Sendable {
    /// Where the pushes of a platform go.
    package enum Adapter: Sendable {
        /// The hub on Redis Pub/Sub, holding an offline device's pushes at most this long.
        case simulated(holdFor: Duration)
        /// Apple's servers (or a local `richpush apns-sim`) over HTTP/2 with a provider token.
        case apns(APNSSettings)
        /// No adapter of their own: they go with ``otherPlatforms``.
        case none
    }

    /// Where pushes to platforms with no adapter of their own (`fcm` without ``fcm``, `wns`, …) go.
    package enum OtherPlatforms: Sendable {
        /// To the hub on Redis Pub/Sub, holding an offline device's pushes at most this long.
        case simulated(holdFor: Duration)
        /// Nowhere: each such push fails at once, permanently, with a reason naming the missing
        /// adapter (never handed to an adapter that would refuse the token and unregister the device).
        case refused
    }

    /// Where and as whom the APNs adapter sends: the clients hold the connections (the caller
    /// runs them in the process's `ServiceGroup`, which closes them), the signer the team's key.
    package struct APNSSettings: Sendable {
        /// Connections to Apple's production service, for installations of environment `production`.
        package var client: HTTP2Client
        /// Connections to Apple's sandbox service, for installations of environment `sandbox`
        /// (nil: none; their pushes fail, unsent). It connects at its first push, not before.
        package var sandboxClient: HTTP2Client?
        package var topic: String
        package var signer: APNSSigningKey
        /// How long a push waits after APNs' 429 `TooManyRequests`, which names no time.
        package var throttleWait: Duration

        package init(
            client: HTTP2Client, sandboxClient: HTTP2Client? = nil, topic: String, signer: APNSSigningKey,
            throttleWait: Duration = .seconds(30)
        ) {
            self.client = client
            self.sandboxClient = sandboxClient
            self.topic = topic
            self.signer = signer
            self.throttleWait = throttleWait
        }

        /// The clients the caller runs and shuts down.
        package var clients: [HTTP2Client] { [client] + (sandboxClient.map { [$0] } ?? []) }
    }

    /// Where Android devices (platform `fcm`) go through FCM HTTP v1 and the service account it
    /// sends as. Both clients are the caller's (run and shut down by its `ServiceGroup`): the
    /// HTTP/2 client to FCM's endpoint for the sends, the HTTP client for the token endpoint.
    package struct FCMSettings: Sendable {
        /// Connections to `https://fcm.googleapis.com`, or to a local `richpush fcm-sim`.
        package var client: HTTP2Client
        package var http: HTTPClient
        package var account: FCMServiceAccount
        /// How long a token exchange may take (a send's timeout is the client's).
        package var timeout: Duration

        package init(client: HTTP2Client, http: HTTPClient, account: FCMServiceAccount, timeout: Duration = .seconds(10)) {
            self.client = client
            self.http = http
            self.account = account
            self.timeout = timeout
        }

        /// The fleet's shared access token for this account.
        package func accessToken(redis: any RedisClient, prefix: String) -> FCMAccessToken {
            FCMAccessToken(redis: redis, prefix: prefix, account: account, http: http, timeout: timeout)
        }
    }

    package var worker: JobWorkerConfiguration
    /// Where iOS pushes (platform `apns`) go; the hub also takes every platform without an
    /// adapter of its own.
    package var adapter: Adapter
    /// When set, installations with platform `fcm` (or legacy `gcm`) get FCM messages through FCM.
    package var fcm: FCMSettings?
    /// When set, installations with platform `webpush` get their messages through their push
    /// services, signed with this VAPID key.
    package var webPush: WebPushSettings?
    /// With the APNs adapter: where the other platforms' pushes go (`fcm` ones too, without ``fcm``).
    package var otherPlatforms: OtherPlatforms
    package var renderer: PushRenderer
    /// Installations per fan-out sub-job.
    package var fanOutBatch: Int
    /// Most pushes a worker's batch holds at once: a read of many sub-jobs is sent in rounds of
    /// this many, which bounds the worker's memory whatever the audience.
    package var maxPushesPerRound: Int = 1_000
    /// Pushes a minute for notifications that set no `throttlePerMinute` (0: as fast as possible).
    package var defaultThrottlePerMinute: Int = 0
    /// How long records live (the API's retention).
    package var retention: Duration
    /// How long a (notification, installation) lease lasts in the delivery ledger.
    package var leaseDuration: Duration
    /// The app whose stored credentials the adapters send as, kept current while the worker
    /// runs; nil: the credentials given as flags.
    package var apps: WorkerAppCredentials?
    /// How the `auto` delivery chooses each device's form.
    package var autoDelivery = AutoDelivery()

    package init(
        worker: JobWorkerConfiguration = JobWorkerConfiguration(), adapter: Adapter = .simulated(holdFor: .seconds(86400)),
        renderer: PushRenderer = PushRenderer(), fanOutBatch: Int = 500, retention: Duration = .seconds(7 * 86400),
        leaseDuration: Duration = .seconds(30), fcm: FCMSettings? = nil, otherPlatforms: OtherPlatforms = .refused
    ) {
        self.worker = worker
        self.adapter = adapter
        self.fcm = fcm
        self.otherPlatforms = otherPlatforms
        self.renderer = renderer
        self.fanOutBatch = fanOutBatch
        self.retention = retention
        self.leaseDuration = leaseDuration
    }
}

/// What a worker needs from outside: one place builds it for `richpush worker` and the tests.
package struct WorkerDependencies: Sendable {
    /// Shared connections for stores and the adapter.
    package var redis: any RedisClient
    /// For the worker's own blocking reads (a connection of its own).
    package var redisConfiguration: RedisConfiguration
    /// Where the blocking readers connect: that Redis, or on Redis Cluster each partition's node.
    package var locator: RedisNodeLocator
    /// The keys, with the number of partitions the worker consumes (all of them).
    package var keys: StorageKeys
    /// The queue's settings (its partition is replaced by each partition's name).
    package var queue: JobQueueConfiguration

    package init(
        redis: any RedisClient, redisConfiguration: RedisConfiguration, keys: StorageKeys, queue: JobQueueConfiguration,
        locator: RedisNodeLocator? = nil
    ) {
        self.redis = redis
        self.redisConfiguration = redisConfiguration
        self.locator = locator ?? .standalone(redisConfiguration)
        self.keys = keys
        self.queue = queue
    }

    /// The queue settings of partition `index`.
    package func queue(partition index: Int) -> JobQueueConfiguration {
        var configuration = queue
        if keys.partitions > 1 { configuration.partition = keys.partitionNames[index] }
        return configuration
    }
}

/// Builds one job loop per partition (`dependencies.keys.partitions`), each reading its own
/// stream on its own connection with an equal share of `configuration.worker.concurrency`
/// (at least 1), so every partition is served whatever the others' backlog (part of
/// ``buildWorker(configuration:dependencies:process:extraHandlers:logger:)``). The push adapters are shared.
func buildJobLoops(
    configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies, adapter: any PushAdapter, apps: AppAdapters,
    appLabels: AppLabels, extraHandlers: (inout JobHandlers) -> Void, logger: Logger
) -> [JobWorker] {
    // Dead tokens and device back-offs are kept for the platforms that declare them (APNs, FCM,
    // Web Push), not for the hub alone.
    let providers =
        configuration.fcm != nil || configuration.webPush != nil || { if case .apns = configuration.adapter { true } else { false } }()
    let goneTokens: (any GoneTokens)? = providers ? RedisGoneTokens(redis: dependencies.redis, keys: dependencies.keys) : nil
    let deviceBackOffs: (any DeviceBackOffs)? = providers ? RedisDeviceBackOffs(redis: dependencies.redis, keys: dependencies.keys) : nil
    // One key signs every alert's media URL, kept in Redis beside the API's.
    let mediaSigner = MediaURLSigner(redis: dependencies.redis, keys: dependencies.keys)
    let partitions = dependencies.keys.partitions
    var workerConfiguration = configuration.worker
    workerConfiguration.concurrency = max(1, (configuration.worker.concurrency + partitions - 1) / partitions)
    return (0..<partitions).map { index in
        let queue = JobQueue(redis: dependencies.redis, configuration: dependencies.queue(partition: index))
        let keys = dependencies.keys.inPartition(index)
        var handlers = JobHandlers()
        extraHandlers(&handlers)
        let ledger = RedisDeliveryLedger(redis: dependencies.redis, keys: keys, retention: configuration.retention)
        let handler = RichPushJobHandler(
            ledger: ledger,
            installations: RedisInstallationStore(redis: dependencies.redis, keys: keys),
            queue: queue, adapter: adapter, renderer: configuration.renderer, formats: PushFormat.byPlatform,
            fanOutBatch: configuration.fanOutBatch, defaultThrottlePerMinute: configuration.defaultThrottlePerMinute,
            leaseDuration: configuration.leaseDuration,
            maxPushesPerRound: configuration.maxPushesPerRound, goneTokens: goneTokens, deviceBackOffs: deviceBackOffs, failedPushes: queue,
            autoDelivery: configuration.autoDelivery, mediaSigner: mediaSigner, logger: logger)
        RichPushJobRouter(base: handler, ledger: ledger, keys: keys, redis: dependencies.redis, adapters: apps).register(in: &handlers)
        var partitionLogger = logger
        if partitions > 1 { partitionLogger[metadataKey: "partition"] = "\(keys.partition)" }
        return JobWorker(
            queue: queue, handlers: handlers, locator: dependencies.locator, configuration: workerConfiguration, appLabels: appLabels,
            logger: partitionLogger)
    }
}

/// The adapters of the apps other than the default, from their stored credentials over this
/// worker's provider clients (see ``AppAdapters``).
func buildAppAdapters(configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies) -> AppAdapters {
    let sendsAsSomeone =
        configuration.fcm != nil || configuration.webPush != nil || { if case .apns = configuration.adapter { true } else { false } }()
    return AppAdapters(store: configuration.apps?.store, needsCredentials: sendsAsSomeone) { app, credentials in
        var (scoped, refused) = try configuration.forApp(app, credentials: credentials)
        // APNs connections of the app's own, per Apple environment (opened at the first push):
        // a connection carries one provider token, and APNs answers a token switched back and
        // forth on one connection with 429 TooManyProviderTokenUpdates.
        var clients: [HTTP2Client] = []
        if case .apns(var settings) = scoped.adapter, refused[.apns] == nil {
            settings.client = try HTTP2Client(configuration: settings.client.configuration)
            clients.append(settings.client)
            if let sandbox = settings.sandboxClient {
                let client = try HTTP2Client(configuration: sandbox.configuration)
                settings.sandboxClient = client
                clients.append(client)
            }
            scoped.adapter = .apns(settings)
        }
        return (buildAdapter(configuration: scoped, dependencies: dependencies, app: app, refused: refused), clients)
    }
}

/// The push adapter every partition's jobs send through: APNs, FCM and the hub by platform.
/// `refused`: platforms whose pushes fail at once with the reason given (an app without their credentials).
func buildAdapter(
    configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies, app: AppID = .default,
    refused: [Platform: String] = [:]
) -> any PushAdapter {
    let hub = { (holdFor: Duration) in
        SimulatedHubAdapter(redis: dependencies.redis, prefix: dependencies.queue.prefix, holdFor: holdFor, app: app)
    }
    var routes: [Platform: any PushAdapter] = [:]
    // A provider's hold (a quota, a Retry-After on 429) is shared by the whole fleet.
    let holds = RedisProviderPauses(redis: dependencies.redis, keys: dependencies.keys)
    if case .apns(let settings) = configuration.adapter {
        routes[.apns] = APNSPushAdapter(
            client: settings.client, sandboxClient: settings.sandboxClient, topic: settings.topic,
            token: APNSSharedToken(redis: dependencies.redis, prefix: dependencies.queue.prefix, signer: settings.signer),
            holds: holds, throttleWait: settings.throttleWait)
    }
    if let webPush = configuration.webPush {
        routes[.webpush] = WebPushPushAdapter(
            http: webPush.http, connections: webPush.connections, vapid: webPush.vapid, timeout: webPush.timeout)
    }
    if let fcm = configuration.fcm {
        let token = fcm.accessToken(redis: dependencies.redis, prefix: dependencies.queue.prefix)
        let adapter = FCMPushAdapter(client: fcm.client, projectID: fcm.account.projectID, token: token, holds: holds)
        routes[.fcm] = adapter
        routes[.gcm] = adapter
    }
    // Android devices get an FCM message whichever adapter carries it (the hub in demos).
    let fallback: any PushAdapter =
        switch (configuration.adapter, configuration.otherPlatforms) {
        case (.simulated(let holdFor), _), (_, .simulated(let holdFor)): hub(holdFor)
        case (_, .refused): UnroutedPushAdapter(configured: Set(routes.values.map(\.name)).sorted())
        }
    for (platform, reason) in refused { routes[platform] = UnroutedPushAdapter(reason: reason) }
    return routes.isEmpty ? fallback : RoutedPushAdapter(fallback: fallback, routes: routes)
}
