import Hiredis
import Logging
import RichPushApps
import RichPushWorker

extension WorkerCommand {
    /// With a key-encryption key, the default app's stored credentials: opened at start (a wrong
    /// key stops the worker here, naming the key it lacks), then followed while the worker runs.
    /// Redis not answering yet leaves them to the watcher's first check.
    static func appCredentials(kek: KeyEncryptionOptions, redis: any RedisClient, prefix: String, logger: Logger) async throws -> WorkerAppCredentials? {
        guard let ring = try kek.ring() else { return nil }
        let store = RedisAppStore(redis: redis, keys: AppKeys(prefix: prefix), ring: ring)
        try await AppKeyRingCheck.atStart(store, logger: logger)
        do {
            let loaded = try await store.credentials(id: .default) ?? (0, AppCredentials())
            let platforms = [loaded.1.apns.map { _ in "apns" }, loaded.1.fcm.map { _ in "fcm" }].compactMap { $0 }
            logger.info("sending as the default app's stored credentials where it has them",
                        metadata: ["version": "\(loaded.0)", "platforms": "\(platforms)"])
            return WorkerAppCredentials(store: store, loaded: loaded)
        } catch let error as AppError {
            throw CLIError(error.description)
        } catch let error as RedisError {
            logger.warning("cannot read the default app's credentials yet", metadata: ["error": "\(error.message)"])
            return WorkerAppCredentials(store: store, loaded: (-1, AppCredentials()))
        }
    }
}
