import Hiredis
import Logging
import RichPushApps
import RichPushQueue
import RichPushWorker

extension WorkerCommand {
    /// With a key-encryption key, the default app's stored credentials: opened at start (a wrong
    /// key stops the worker here, naming the key it lacks), then followed while the worker runs.
    /// Redis not answering yet leaves them to the watcher's first check.
    static func appCredentials(
        kek: KeyEncryptionOptions, redis: any RedisClient, prefix: String, logger: Logger
    ) async throws -> WorkerAppCredentials? {
        guard let ring = try kek.ring() else { return nil }
        let store = RedisAppStore(redis: redis, keys: AppKeys(prefix: prefix), ring: ring)
        try await AppKeyRingCheck.atStart(store, logger: logger)
        do {
            let loaded = try await store.credentials(id: .default) ?? (0, AppCredentials())
            let platforms = [loaded.1.apns.map { _ in "apns" }, loaded.1.fcm.map { _ in "fcm" }].compactMap { $0 }
            logger.info(
                "sending as the default app's stored credentials where it has them",
                metadata: ["version": "\(loaded.0)", "platforms": "\(platforms)"])
            return WorkerAppCredentials(store: store, loaded: loaded)
        } catch let error as AppError {
            throw CLIError(error.description)
        } catch let error as RedisError {
            logger.warning("cannot read the default app's credentials yet", metadata: ["error": "\(error.message)"])
            return WorkerAppCredentials(store: store, loaded: (-1, AppCredentials()))
        }
    }

    /// Fair scheduling: writes every app's stored weight and cap into the partitions this worker
    /// serves, in one pipelined round trip, and pauses there the apps whose record says paused,
    /// so a partition added later (or a scheduler hash that was lost) gets them without an
    /// `apps set` or `apps pause`. It only adds pauses: an app paused in the partitions but not
    /// on its record (paused before the record kept it) stays paused until resumed. Redis not
    /// answering yet is a warning: the stored values are written again by the next start.
    static func applyStoredScheduling(redis: any RedisClient, queue: QueueOptions, logger: Logger) async {
        guard queue.configuration.scheduling == .fair else { return }
        let queues = queue.partitionConfigurations.map { JobQueue(redis: redis, configuration: $0) }
        do {
            let apps = try await RedisAppStore(redis: redis, keys: AppKeys(prefix: queue.prefix), ring: nil).list()
            try await JobQueue.setLimits(apps.map { ($0.id.rawValue, $0.scheduling) }, in: queues)
            let paused = apps.filter(\.paused).flatMap { AppsCommand.pausedApps($0.id) }
            if !paused.isEmpty { _ = try await JobQueue.setPaused(true, apps: paused, in: queues) }
        } catch {
            logger.warning("cannot write the apps' stored weights and caps into the queue yet", metadata: ["error": "\(error)"])
        }
    }
}
