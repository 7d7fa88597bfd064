import RichPushCore
import Synchronization

/// A route collection per app: built the first time a request names the app, then kept while
/// the app's settings stay the same (``AppDirectory`` re-reads them every ``AppDirectory/memory``),
/// so a request looks its app's routes up rather than building them.
final class RoutesPerApp<Routes: Sendable>: Sendable {
    typealias Make = @Sendable (AppID, APIStores, AppDirectory.Settings) -> Routes

    private let apps: AppDirectory
    private let make: Make
    private let built = Mutex<[AppID: (settings: AppDirectory.Settings, routes: Routes)]>([:])

    /// `make` builds an app's routes over its stores and with its settings.
    init(apps: AppDirectory, make: @escaping Make) {
        self.apps = apps
        self.make = make
    }

    /// The routes of the app the request is in (``APIRequestContext/app``).
    func callAsFunction(_ context: APIRequestContext) async throws -> Routes {
        try await routes(for: context.app)
    }

    /// The routes of `app`: the ones built before, unless its settings changed since.
    func routes(for app: AppID) async throws -> Routes {
        let settings = try await apps.settings(for: app)
        if let entry = built.withLock({ $0[app] }), entry.settings == settings { return entry.routes }
        let routes = make(app, apps.stores(for: app), settings)
        built.withLock { $0[app] = (settings, routes) }
        return routes
    }
}
