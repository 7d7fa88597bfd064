import APITestSupport
import RichPushCore
import Synchronization
import Testing

@testable import RichPushAPI

/// An app's routes are built once and kept while its settings stay the same.
@Suite("Routes per app")
struct RoutesPerAppTests {
    struct Built: Sendable, Equatable {
        let app: AppID
        let limits: AppLimits
        let serial: Int
    }

    @Test func builtOncePerAppAndAgainWhenItsSettingsChange() async throws {
        let api = InMemoryAPI()
        let shop = try AppID("shop")
        let news = try AppID("news")
        let limits = Mutex<[AppID: AppLimits]>([shop: .none, news: .none])
        let apps = AppDirectory(
            defaultStores: api.dependencies.stores, build: { _ in api.dependencies.stores },
            lookup: { app in limits.withLock { $0[app] }.map { AppDirectory.Settings(limits: $0) } })
        let builds = Mutex(0)
        let routes = RoutesPerApp(apps: apps) { app, _, settings in
            Built(
                app: app, limits: settings.limits,
                serial: builds.withLock {
                    $0 += 1; return $0
                })
        }
        let first = try await routes.routes(for: shop)
        #expect(try await routes.routes(for: shop) == first)
        #expect(try await routes.routes(for: shop) == first)
        #expect(builds.withLock { $0 } == 1, "a request looks the routes up; it does not build them")
        let newsRoutes = try await routes.routes(for: news)
        #expect(newsRoutes.app == news && newsRoutes.serial == 2)

        var changed = AppLimits.none
        changed.audience = 10
        limits.withLock { $0[shop] = changed }
        apps.forget(shop)
        let rebuilt = try await routes.routes(for: shop)
        #expect(rebuilt.limits == changed && rebuilt.serial == 3, "the app's new limits are the routes' now")
        #expect(try await routes.routes(for: shop) == rebuilt)
    }
}
