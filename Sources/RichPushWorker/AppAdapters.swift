import RichPushApps
import RichPushCore
import RichPushQueue

/// Each app's push adapter, as its stored credentials say, for the apps other than the default
/// (whose adapter the worker builds at start and ``AppCredentialWatcher`` keeps current).
///
/// An app's adapter is built the first time one of its jobs comes, over the worker's provider
/// clients (no connection of its own), and checked against the app's version at most every
/// ``recheckAfter`` (one HGET), so a credential change is used within 5 s on every worker; an
/// app idle for ten minutes is forgotten. Nothing runs per app.
final class AppAdapters: Sendable {
    /// How long an app's adapter is used before its version is read again.
    static let recheckAfter: Duration = .seconds(5)

    struct Entry: Sendable {
        var adapter: any PushAdapter
        var version: Int
        var checked: ContinuousClock.Instant
    }

    /// Where apps' credentials are read; nil when the worker was given no key-encryption key.
    let store: RedisAppStore?
    /// Whether the worker's adapters send as anyone (APNs, FCM, Web Push); the hub alone needs
    /// no credentials (an app's hub adapter only names the app in what it holds).
    let needsCredentials: Bool
    /// Builds an app's adapter from its credentials.
    let build: @Sendable (AppID, AppCredentials) throws -> any PushAdapter
    private let cache = AppScopeCache<Entry>()

    init(store: RedisAppStore?, needsCredentials: Bool, build: @escaping @Sendable (AppID, AppCredentials) throws -> any PushAdapter) {
        self.store = store
        self.needsCredentials = needsCredentials
        self.build = build
    }

    /// The adapter `app`'s pushes go through now. Throws a retryable ``JobError`` when its
    /// credentials cannot be had now (no key-encryption key here, a key this worker lacks), and a
    /// permanent one when the app no longer exists.
    func adapter(for app: AppID) async throws -> any PushAdapter {
        guard needsCredentials else {
            return try cache.value(for: app) { Entry(adapter: try build(app, AppCredentials()), version: 0, checked: .now) }.adapter
        }
        guard let store else {
            throw JobError.retry("this worker was given no key-encryption key (--kek-file), so it cannot send as app '\(app)'", after: .seconds(30))
        }
        let now = ContinuousClock.now
        let cached = cache.touch(app, now: now)
        if let cached, now - cached.checked < Self.recheckAfter { return cached.adapter }
        if let cached, let version = try await store.version(id: app), version == cached.version {
            cache.set(Entry(adapter: cached.adapter, version: version, checked: now), for: app)
            return cached.adapter
        }
        let loaded: (version: Int, credentials: AppCredentials)?
        do {
            loaded = try await store.credentials(id: app)
        } catch let error as AppError {
            throw JobError.retry("cannot open the credentials of app '\(app)': \(error)", after: .seconds(30))
        }
        guard let loaded else { throw JobError.permanent("app '\(app)' does not exist (it was removed)") }
        let adapter: any PushAdapter
        do {
            adapter = try build(app, loaded.credentials)
        } catch {
            throw JobError.retry("the credentials of app '\(app)' make no signer: \(error)", after: .seconds(30))
        }
        cache.set(Entry(adapter: adapter, version: loaded.version, checked: now), for: app)
        return adapter
    }
}
