import Foundation
package import Hummingbird
package import Logging
import NIOCore
import RichPushCore
import ServiceLifecycle

/// Builds the router: operations routes open, everything under `/api` behind authentication.
func buildRouter(
    configuration: APIConfiguration, dependencies: APIDependencies, apps: AppDirectory, auth: AuthState,
    extraRoutes: (Router<APIRequestContext>) -> Void = { _ in }
) -> Router<APIRequestContext> {
    let router = Router(context: APIRequestContext.self)
    router.middlewares.add(MetricsMiddleware())
    router.middlewares.add(RequestLogMiddleware())
    // Outside the error middleware: it sees every error already as an APIError.
    router.middlewares.add(NoStoreMiddleware())
    router.middlewares.add(ErrorMiddleware())
    router.middlewares.add(MethodNotAllowedMiddleware())
    router.middlewares.add(
        RequestHygieneMiddleware(
            maxBodyBytes: configuration.maxBodyBytes,
            largerBodies: ["/api/notifications/batch": configuration.maxBatchBodyBytes]))
    router.middlewares.add(ClientAddressMiddleware(proxies: configuration.trustedProxies))
    let stores = dependencies.stores
    var apiConfiguration = configuration
    if apiConfiguration.defaultImage == nil { apiConfiguration.defaultImage = BundledResources.defaultImage }

    OperationsRoutes(ready: stores.ready, registry: dependencies.registry, openAPI: BundledResources.openAPI)
        .add(to: router)
    extraRoutes(router)
    DevicePageRoutes(page: BundledResources.devicePage, script: BundledResources.deviceScript, style: BundledResources.deviceStyle).add(
        to: router)
    if let console = dependencies.console {
        ConsoleRoutes(
            backend: console, apps: dependencies.apps, configuration: configuration.console,
            auth: AuthMiddleware(apps: apps, configuration: configuration.auth, state: auth),
            assets: (BundledResources.consoleScript, BundledResources.consoleStyle),
            liveStreams: LiveStreamSlots(limit: configuration.console.maxLiveStreams)
        ).add(to: router)
    }
    if let signer = dependencies.mediaSigner { MediaRoutes(apps: apps, signer: signer).add(to: router) }
    let api = router.group("api").add(middleware: AuthMiddleware(apps: apps, configuration: configuration.auth, state: auth))
    // Every request runs on the routes of the app it is in (APIRequestContext.app), built once
    // per app over its stores.
    RegistrationRoutes.add(
        to: api,
        for: RoutesPerApp(apps: apps) { [quotas = configuration.quotas] _, stores, _ in
            RegistrationRoutes(installations: stores.installations, quotas: quotas)
        })
    NotificationRoutes.add(to: api, for: NotificationRoutes.perApp(apps, configuration: apiConfiguration, stores: stores))
    TemplateRoutes.add(to: api)
    WebhookRoutes.add(
        to: api,
        for: RoutesPerApp(apps: apps) { [allowPrivate = configuration.webhookAllowPrivate] _, stores, _ in
            WebhookRoutes(webhooks: stores.webhooks, allowPrivate: allowPrivate)
        })
    if let appStore = dependencies.apps {
        // The operator's routes: their own credential, not a user's (see OperatorAuthMiddleware).
        AppRoutes(
            apps: appStore, users: { apps.stores(for: $0).users }, applyScheduling: dependencies.applyScheduling,
            forgetScheduling: dependencies.forgetScheduling
        ).add(to: router.group("api/apps").add(middleware: OperatorAuthMiddleware(token: configuration.operatorToken, apps: apps)))
    }
    return router
}

/// Builds the whole application; `richpush api` runs it, tests drive it with HummingbirdTesting.
/// `onServerRunning`: called once the server listens (with port 0, the channel says which port).
/// `extraRoutes`: routes beside the API's own, unauthenticated (`richpush-bench api` adds its
/// ceiling, `GET /bench/hello`).
package func buildApplication(
    configuration: APIConfiguration, dependencies: APIDependencies,
    extraRoutes: (Router<APIRequestContext>) -> Void = { _ in }, logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    if configuration.auth.mode == .demo {
        logger.warning(
            "AUTH MODE DEMO: any user whose password equals their name is let in. This is the tutorial's check, not authentication; never expose this server."
        )
    }
    let apps = AppDirectory.of(dependencies)
    // A user's credentials changed: their app's cached records go (`<app>/<name>` in another app).
    let auth = AuthState(configuration: configuration.auth) { name in
        apps.stores(for: AppID.of(credentialName: name)).dropCachedNotifications()
    }
    var services: [any Service] = []
    if let changes = dependencies.credentialChanges {
        services.append(CredentialChangeListener(changes: changes, state: auth, logger: logger))
    }
    let bodyTimeout = TimeAmount.milliseconds(Int64(configuration.bodyTimeout.milliseconds))
    return Application(
        router: buildRouter(configuration: configuration, dependencies: dependencies, apps: apps, auth: auth, extraRoutes: extraRoutes),
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [BodyTimeoutHandler(timeout: bodyTimeout)],
                idleTimeout: .milliseconds(Int64(configuration.idleTimeout.milliseconds)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "RichPush"),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
}

extension AppDirectory {
    /// The directory of the apps the dependencies serve: their stores, and their settings from
    /// the app store (none without one).
    static func of(_ dependencies: APIDependencies) -> AppDirectory {
        var lookup: (@Sendable (AppID) async throws -> AppDirectory.Settings?)?
        if let store = dependencies.apps {
            lookup = { app in
                try await store.summary(id: app).map {
                    AppDirectory.Settings(limits: $0.limits, defaultLocale: $0.defaultLocale, defaultDelivery: $0.defaultDelivery)
                }
            }
        }
        return AppDirectory(defaultStores: dependencies.stores, build: dependencies.appStores, lookup: lookup)
    }
}

extension NotificationRoutes {
    /// Each app's notification routes, built once per app (see ``RoutesPerApp``); `configuration`
    /// with its default image.
    static func perApp(_ apps: AppDirectory, configuration: APIConfiguration, stores: APIStores) -> RoutesPerApp<NotificationRoutes> {
        let backlog = BacklogGuard(readBacklog: stores.backlog, limit: configuration.maxBacklog)
        let batches = batchGate(configuration)
        return RoutesPerApp(apps: apps) { app, stores, settings in
            var routes = NotificationRoutes(
                notifications: stores.notifications, installations: stores.installations, backlog: backlog,
                configuration: configuration, cachedRecord: stores.cachedNotification, batches: batches)
            routes.app = app
            routes.appLimits = settings.limits
            routes.defaultLocale = settings.defaultLocale
            routes.defaultDelivery = settings.defaultDelivery
            return routes
        }
    }
}

/// Files shipped inside the target.
enum BundledResources {
    static let defaultImage: [UInt8] = load("default-image", "png")
    static let openAPI: [UInt8] = load("openapi", "yaml")
    static let devicePage: [UInt8] = load("device", "html")
    static let deviceScript: [UInt8] = load("device", "js")
    static let deviceStyle: [UInt8] = load("device", "css")
    static let consoleScript: [UInt8] = load("console", "js")
    static let consoleStyle: [UInt8] = load("console", "css")

    private static func load(_ name: String, _ ext: String) -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext), let data = try? Data(contentsOf: url) else { return [] }
        return Array(data)
    }
}
