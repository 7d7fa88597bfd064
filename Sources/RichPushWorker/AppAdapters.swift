import RichPushApps
import RichPushCore
import RichPushHTTP2
import RichPushQueue
import ServiceLifecycle

/// Each app's push adapter, as its stored credentials say, for the apps other than the default
/// (whose adapter the worker builds at start and ``AppCredentialWatcher`` keeps current).
///
/// An app's adapter is built the first time one of its jobs comes, over the worker's provider
/// clients (no connection of its own), and checked against the app's version at most every
/// ``recheckAfter`` (one HGET), so a credential change is used within 5 s on every worker; an
/// app idle for ten minutes is forgotten. Nothing runs per app.
final class AppAdapters: Service, Sendable {
    /// How long an app's adapter is used before its version is read again.
    static let recheckAfter: Duration = .seconds(5)

    struct Entry: Sendable {
        var adapter: any PushAdapter
        var version: Int
        var checked: ContinuousClock.Instant
        /// The app's own provider clients (APNs: a connection carries one team's provider token,
        /// and APNs refuses one switched back and forth with TooManyProviderTokenUpdates).
        var clients: [HTTP2Client] = []
    }

    /// How long a replaced adapter's clients stay open for the pushes already on them.
    static let retireAfter: Duration = .seconds(30)

    /// Where apps' credentials are read; nil when the worker was given no key-encryption key.
    let store: RedisAppStore?
    /// Whether the worker's adapters send as anyone (APNs, FCM, Web Push); the hub alone needs
    /// no credentials (an app's hub adapter only names the app in what it holds).
    let needsCredentials: Bool
    /// Builds an app's adapter from its credentials, with the clients it opened for the app.
    let build: @Sendable (AppID, AppCredentials) throws -> (adapter: any PushAdapter, clients: [HTTP2Client])
    private let cache = PerAppCache<Entry>(retire: { entry in
        guard !entry.clients.isEmpty else { return }
        // Pushes already on them finish first (or fail as retryable when they outlast this).
        Task {
            try? await Task.sleep(for: AppAdapters.retireAfter)
            for client in entry.clients { client.shutdown() }
        }
    })

    init(
        store: RedisAppStore?, needsCredentials: Bool,
        build: @escaping @Sendable (AppID, AppCredentials) throws -> (adapter: any PushAdapter, clients: [HTTP2Client])
    ) {
        self.store = store
        self.needsCredentials = needsCredentials
        self.build = build
    }

    /// Waits for the process's graceful shutdown (this service stops after the job loops), then
    /// closes every app's clients.
    func run() async throws {
        try? await gracefulShutdown()
        shutdown()
    }

    /// Closes every app's clients at once (the worker is stopping).
    func shutdown() {
        cache.removeAll { entry in for client in entry.clients { client.shutdown() } }
    }

    /// The adapter `app`'s pushes go through now. Throws a retryable ``JobError`` when its
    /// credentials cannot be had now (no key-encryption key here, a key this worker lacks), and a
    /// permanent one when the app no longer exists.
    func adapter(for app: AppID) async throws -> any PushAdapter {
        guard needsCredentials else {
            return try cache.value(for: app) {
                let built = try build(app, AppCredentials())
                return Entry(adapter: built.adapter, version: 0, checked: .now, clients: built.clients)
            }.adapter
        }
        guard let store else {
            throw JobError.retry(
                "this worker was given no key-encryption key (--kek-file), so it cannot send as app '\(app)'", after: .seconds(30))
        }
        let now = ContinuousClock.now
        let cached = cache.touch(app, now: now)
        if let cached, now - cached.checked < Self.recheckAfter { return cached.adapter }
        if let cached, let version = try await store.version(id: app), version == cached.version {
            cache.update(app) { $0.checked = now }
            return cached.adapter
        }
        let loaded: (version: Int, credentials: AppCredentials)?
        do {
            loaded = try await store.credentials(id: app)
        } catch let error as AppError {
            throw JobError.retry("cannot open the credentials of app '\(app)': \(error)", after: .seconds(30))
        }
        guard let loaded else { throw JobError.permanent("app '\(app)' does not exist (it was removed)") }
        let built: (adapter: any PushAdapter, clients: [HTTP2Client])
        do {
            built = try build(app, loaded.credentials)
        } catch {
            throw JobError.retry("the credentials of app '\(app)' make no signer: \(error)", after: .seconds(30))
        }
        // The adapter it replaces (older credentials) is retired with its clients.
        cache.set(Entry(adapter: built.adapter, version: loaded.version, checked: now, clients: built.clients), for: app)
        return built.adapter
    }
}
