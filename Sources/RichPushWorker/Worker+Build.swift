public import AsyncHTTPClient
public import RichPushAPNS
public import RichPushFCM
public import Hiredis
public import Logging
import RichPushAdapters
public import RichPushCore
public import RichPushQueue
public import RichPushStorage

/// Everything `richpush worker` can be told about delivery, with production defaults.
public struct RichPushWorkerConfiguration: Sendable {
    /// Where pushes go.
    public enum Adapter: Sendable {
        /// The hub on Redis Pub/Sub, keeping an offline device's newest push this long.
        case simulated(holdFor: Duration)
        /// Apple's servers (or a local `richpush apns-sim`) over HTTP/2 with a provider token.
        case apns(APNSSettings)
    }

    /// Where and as whom the APNs adapter sends: the client holds the connections (the caller
    /// runs it in the process's `ServiceGroup`, which closes them), the signer the team's key.
    public struct APNSSettings: Sendable {
        public var client: APNSClient
        public var topic: String
        public var signer: APNSSigningKey

        public init(client: APNSClient, topic: String, signer: APNSSigningKey) {
            self.client = client
            self.topic = topic
            self.signer = signer
        }
    }

    /// Where Android devices (platform `fcm`) go through FCM HTTP v1 and the service account it
    /// sends as; the HTTP client is the caller's (shut down by its `ServiceGroup`).
    public struct FCMSettings: Sendable {
        public var http: HTTPClient
        /// `https://fcm.googleapis.com`, or a local `richpush fcm-sim`.
        public var baseURL: String
        public var account: FCMServiceAccount

        public init(http: HTTPClient, baseURL: String = "https://fcm.googleapis.com", account: FCMServiceAccount) {
            self.http = http
            self.baseURL = baseURL
            self.account = account
        }
    }

    public var worker: JobWorkerConfiguration
    /// Where pushes go, unless their platform has a route of its own (`fcm`).
    public var adapter: Adapter
    /// When set, installations with platform `fcm` get FCM data messages through FCM.
    public var fcm: FCMSettings?
    public var renderer: PushRenderer
    /// Installations per fan-out sub-job.
    public var fanOutBatch: Int
    /// How long records live (the API's retention).
    public var retention: Duration
    /// How long a (notification, installation) lease lasts in the delivery ledger.
    public var leaseDuration: Duration

    public init(worker: JobWorkerConfiguration = JobWorkerConfiguration(), adapter: Adapter = .simulated(holdFor: .seconds(86400)),
                renderer: PushRenderer = PushRenderer(), fanOutBatch: Int = 500, retention: Duration = .seconds(7 * 86400),
                leaseDuration: Duration = .seconds(30), fcm: FCMSettings? = nil) {
        self.worker = worker
        self.adapter = adapter
        self.fcm = fcm
        self.renderer = renderer
        self.fanOutBatch = fanOutBatch
        self.retention = retention
        self.leaseDuration = leaseDuration
    }
}

/// What a worker needs from outside: one place builds it for `richpush worker` and the tests.
public struct WorkerDependencies: Sendable {
    /// Shared connections for stores and the adapter.
    public var redis: any RedisClient
    /// For the worker's own blocking reads (a connection of its own).
    public var redisConfiguration: RedisConfiguration
    public var keys: StorageKeys
    public var queue: JobQueueConfiguration

    public init(redis: any RedisClient, redisConfiguration: RedisConfiguration, keys: StorageKeys, queue: JobQueueConfiguration) {
        self.redis = redis
        self.redisConfiguration = redisConfiguration
        self.keys = keys
        self.queue = queue
    }
}

/// Builds a worker that runs rich-push jobs (and whatever `extraHandlers` registers: the bench
/// and test job types): the composition root of `richpush worker` and of the tests.
public func buildWorker(configuration: RichPushWorkerConfiguration, dependencies: WorkerDependencies,
                        extraHandlers: (inout JobHandlers) -> Void = { _ in }, logger: Logger) -> JobWorker {
    let queue = JobQueue(redis: dependencies.redis, configuration: dependencies.queue)
    let base: any PushAdapter = switch configuration.adapter {
    case .simulated(let holdFor):
        SimulatedHubAdapter(redis: dependencies.redis, prefix: dependencies.queue.prefix, holdFor: holdFor)
    case .apns(let settings):
        APNSPushAdapter(client: settings.client, topic: settings.topic,
                        token: APNSSharedToken(redis: dependencies.redis, prefix: dependencies.queue.prefix, signer: settings.signer))
    }
    var adapter = base
    var formats: [Platform: PushFormat] = [:]
    if let fcm = configuration.fcm {
        let token = FCMAccessToken(redis: dependencies.redis, prefix: dependencies.queue.prefix, account: fcm.account, http: fcm.http)
        adapter = RoutedPushAdapter(fallback: base, routes: [.fcm: FCMPushAdapter(http: fcm.http, baseURL: fcm.baseURL, projectID: fcm.account.projectID, token: token)])
        formats[.fcm] = .fcm
    }
    var handlers = JobHandlers()
    extraHandlers(&handlers)
    RichPushJobHandler(
        ledger: RedisNotificationStore(redis: dependencies.redis, keys: dependencies.keys, queue: queue, retention: configuration.retention),
        installations: RedisInstallationStore(redis: dependencies.redis, keys: dependencies.keys),
        queue: queue, adapter: adapter, renderer: configuration.renderer, formats: formats,
        fanOutBatch: configuration.fanOutBatch, leaseDuration: configuration.leaseDuration, logger: logger
    ).register(in: &handlers)
    return JobWorker(queue: queue, handlers: handlers, redis: dependencies.redisConfiguration, configuration: configuration.worker, logger: logger)
}
