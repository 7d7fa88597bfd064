import Hiredis
import Logging
import RichPushApps
import RichPushCore
import ServiceLifecycle

/// Keeps a worker on its app's current credentials without a restart: a change announced on the
/// apps' channel is applied at once, and the app's version is read every `interval` (one HGET)
/// so a missed announcement costs at most that long. A change that cannot be applied (a key this
/// worker lacks) is logged and the credentials in use stay.
struct AppCredentialWatcher: Service {
    let store: RedisAppStore
    let app: AppID
    let subscriber: RedisSubscriber
    let interval: Duration
    /// The version the worker started with.
    let loaded: Int
    /// Builds and installs the adapter for these credentials.
    let apply: @Sendable (AppCredentials) throws -> Void
    let logger: Logger

    func run() async throws {
        let (nudges, nudge) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                for await message in subscriber.messages where String(decoding: message.payload, as: UTF8.self) == app.rawValue {
                    nudge.yield()
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    nudge.yield()
                }
            }
            do {
                try await subscriber.subscribe([store.keys.changes])
            } catch {
                logger.warning("cannot subscribe to app changes; checking every \(interval) instead", metadata: ["error": "\(error)"])
            }
            var version = loaded
            for await _ in nudges.cancelOnGracefulShutdown() {
                version = await refresh(from: version)
            }
            nudge.finish()
            await subscriber.close()
            group.cancelAll()
        }
    }

    /// Applies the app's credentials if their version is not `version`; returns the version in use.
    private func refresh(from version: Int) async -> Int {
        do {
            guard let current = try await store.version(id: app), current != version else { return version }
            guard let (loadedVersion, credentials) = try await store.credentials(id: app) else { return version }
            try apply(credentials)
            logger.notice("app credentials changed; new pushes use them", metadata: ["app": "\(app)", "version": "\(loadedVersion)"])
            return loadedVersion
        } catch let error as AppError {
            logger.error(
                "app credentials changed but cannot be used; the ones in use stay", metadata: ["app": "\(app)", "error": "\(error)"])
            // Not retried until the next change: the same error would be logged every interval.
            return (try? await store.version(id: app)).flatMap { $0 } ?? version
        } catch {
            logger.warning("cannot read the app's credentials now", metadata: ["app": "\(app)", "error": "\(error)"])
            return version
        }
    }
}
