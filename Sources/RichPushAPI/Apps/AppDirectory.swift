import RichPushCore
import Synchronization

/// Which apps exist and each one's stores, for the routes: a request runs on the stores of the
/// app it named (``APIRequestContext/app``), built the first time a request names that app.
///
/// Whether an app exists is remembered for ``memory`` (5 s), found or not, so an app created or
/// removed by another replica or the CLI is seen within that time, and a stream of requests
/// naming an app costs no round trip each.
final class AppDirectory: Sendable {
    /// What a send needs to know of its app: its limits, default locale and default delivery.
    struct Settings: Sendable, Hashable {
        var limits: AppLimits = .none
        var defaultLocale: String?
        var defaultDelivery: PushRenderer.Mode?
    }

    /// How long an app's existence (or absence) is trusted.
    static let memory: Duration = .seconds(5)

    private let defaultStores: APIStores
    private let build: (@Sendable (AppID) -> APIStores)?
    private let lookup: (@Sendable (AppID) async throws -> Settings?)?
    private let built = Mutex<[AppID: APIStores]>([:])
    private let known = PerAppMemory<Settings?>()

    /// `build` makes an app's stores and `lookup` gives an app's settings (nil: there is no such
    /// app); without them only the default app is served, with no limits.
    init(defaultStores: APIStores, build: (@Sendable (AppID) -> APIStores)?, lookup: (@Sendable (AppID) async throws -> Settings?)?) {
        self.defaultStores = defaultStores
        self.build = build
        self.lookup = lookup
    }

    /// The stores of `app` (the default app's for it; an app's are built once, then shared).
    func stores(for app: AppID) -> APIStores {
        guard !app.isDefault, let build else { return defaultStores }
        if let stores = built.withLock({ $0[app] }) { return stores }
        let stores = build(app)
        return built.withLock { built in
            if let existing = built[app] { return existing }
            built[app] = stores
            return stores
        }
    }

    /// Whether `app` exists (the default app always does); Redis's errors are thrown.
    func contains(_ app: AppID) async throws -> Bool {
        if app.isDefault { return true }
        guard lookup != nil else { return false }
        return try await entry(app) != nil
    }

    /// The limits and default locale of `app` (an app that does not exist, or a directory without
    /// apps, has neither).
    func settings(for app: AppID) async throws -> Settings {
        guard lookup != nil else { return Settings() }
        return try await entry(app) ?? Settings()
    }

    /// The app's settings, nil when it does not exist; remembered for ``memory``.
    private func entry(_ app: AppID) async throws -> Settings? {
        guard let lookup else { return nil }
        return try await known.value(for: app) { try await lookup(app) }
    }

    /// Forgets what is known of `app` (it was just created or removed here).
    func forget(_ app: AppID) {
        known.forget(app)
    }
}
