import Foundation
import NIOCore
public import Hiredis
public import Hummingbird
public import Logging
public import Prometheus
import ServiceLifecycle
import RichPushCore
public import RichPushQueue
public import RichPushStorage

/// What the API needs from outside: one place builds it for `richpush api` and for the tests.
public struct APIDependencies: Sendable {
    public var redis: any RedisClient
    public var keys: StorageKeys
    public var queue: JobQueueConfiguration
    /// Where `/metrics` reads from; nil serves an empty page (tests that do not bootstrap metrics).
    public var registry: PrometheusCollectorRegistry?
    /// Hears credential changes from `richpush users`/`keys` so every replica drops its cached
    /// entries at once; nil leaves that to the cache's revalidation after its TTL.
    public var credentialChanges: RedisSubscriber?

    public init(redis: any RedisClient, keys: StorageKeys, queue: JobQueueConfiguration, registry: PrometheusCollectorRegistry? = nil,
                credentialChanges: RedisSubscriber? = nil) {
        self.redis = redis
        self.keys = keys
        self.queue = queue
        self.registry = registry
        self.credentialChanges = credentialChanges
    }
}

/// Builds the router: operations routes open, everything under `/api` behind authentication.
func buildRouter(configuration: APIConfiguration, dependencies: APIDependencies, auth: AuthState, notifications: RedisNotificationStore) -> Router<APIRequestContext> {
    let router = Router(context: APIRequestContext.self)
    router.middlewares.add(MetricsMiddleware())
    router.middlewares.add(RequestLogMiddleware())
    // Outside the error middleware: it sees every error already as an APIError.
    router.middlewares.add(NoStoreMiddleware())
    router.middlewares.add(ErrorMiddleware())
    router.middlewares.add(MethodNotAllowedMiddleware())
    router.middlewares.add(RequestHygieneMiddleware(maxBodyBytes: configuration.maxBodyBytes))
    router.middlewares.add(ClientAddressMiddleware(proxies: configuration.trustedProxies))
    let users = RedisUserStore(redis: dependencies.redis, keys: dependencies.keys)
    let installations = RedisInstallationStore(redis: dependencies.redis, keys: dependencies.keys)
    var apiConfiguration = configuration
    if apiConfiguration.defaultImage == nil { apiConfiguration.defaultImage = BundledResources.defaultImage }

    OperationsRoutes(redis: dependencies.redis, registry: dependencies.registry, openAPI: BundledResources.openAPI)
        .add(to: router, benchRoutes: configuration.benchRoutes)
    let api = router.group("api").add(middleware: AuthMiddleware(users: users, keys: RedisAPIKeyStore(redis: dependencies.redis, keys: dependencies.keys),
                                                                 configuration: configuration.auth, state: auth))
    RegistrationRoutes(installations: installations, quotas: configuration.quotas).add(to: api)
    NotificationRoutes(notifications: notifications, installations: installations,
                       backlog: BacklogGuard(queues: notifications.queues, limit: configuration.maxBacklog), configuration: apiConfiguration,
                       cachedRecord: { notifications.cachedNotification(id: $0) }).add(to: api)
    WebhookRoutes(webhooks: RedisWebhookStore(redis: dependencies.redis, keys: dependencies.keys), allowPrivate: configuration.webhookAllowPrivate).add(to: api)
    return router
}

/// Builds the whole application; `richpush api` runs it, tests drive it with HummingbirdTesting.
/// `onServerRunning`: called once the server listens (with port 0, the channel says which port).
public func buildApplication(configuration: APIConfiguration, dependencies: APIDependencies, logger: Logger,
                             onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
    if configuration.auth.mode == .demo {
        logger.warning("AUTH MODE DEMO: any user whose password equals their name is let in. This is the tutorial's check, not authentication; never expose this server.")
    }
    let queue = JobQueue(redis: dependencies.redis, configuration: dependencies.queue)
    let notifications = RedisNotificationStore(redis: dependencies.redis, keys: dependencies.keys, queue: queue, retention: configuration.retention,
                                               durability: configuration.durability)
    let auth = AuthState(configuration: configuration.auth) { _ in notifications.dropCachedRecords() }
    var services: [any Service] = []
    if let subscriber = dependencies.credentialChanges {
        services.append(CredentialChangeListener(subscriber: subscriber, channel: dependencies.keys.credentialChanges, state: auth, logger: logger))
    }
    let bodyTimeout = TimeAmount.milliseconds(Int64(configuration.bodyTimeout.milliseconds))
    return Application(
        router: buildRouter(configuration: configuration, dependencies: dependencies, auth: auth, notifications: notifications),
        server: .http1(configuration: .init(additionalChannelHandlers: [BodyTimeoutHandler(timeout: bodyTimeout)],
                                            idleTimeout: .milliseconds(Int64(configuration.idleTimeout.milliseconds)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "RichPush"),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Files shipped inside the target.
enum BundledResources {
    static let defaultImage: [UInt8] = load("default-image", "png")
    static let openAPI: [UInt8] = load("openapi", "yaml")

    private static func load(_ name: String, _ ext: String) -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext), let data = try? Data(contentsOf: url) else { return [] }
        return Array(data)
    }
}
