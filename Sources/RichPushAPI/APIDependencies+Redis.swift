package import Hiredis
package import Prometheus
import RichPushCore
package import RichPushQueue
package import RichPushStorage

extension APIDependencies {
    /// The API on Redis: its stores under `keys`, the queue of `queue` (all its partitions), the
    /// records kept as `configuration` says (retention, durability).
    package static func redis(
        redis: any RedisClient, keys: StorageKeys, queue: JobQueueConfiguration, configuration: APIConfiguration,
        registry: PrometheusCollectorRegistry? = nil, credentialChanges: RedisSubscriber? = nil
    ) -> APIDependencies {
        let base = RedisNotificationStore(
            redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: queue),
            retention: configuration.retention, durability: configuration.durability)
        // Every app's store shares the payload cache's budget (see RedisNotificationStore.forApp).
        let build = { @Sendable (app: AppID) -> APIStores in
            let keys = keys.forApp(app)
            let notifications = base.forApp(app)
            return APIStores(
                users: RedisUserStore(redis: redis, keys: keys), apiKeys: RedisAPIKeyStore(redis: redis, keys: keys),
                installations: RedisInstallationStore(redis: redis, keys: keys), notifications: notifications,
                webhooks: RedisWebhookStore(redis: redis, keys: keys),
                ready: { _ = try await redis.send("PING") },
                backlog: { [queues = notifications.queues] in try await JobQueue.backlog(of: queues) },
                cachedNotification: { notifications.cachedNotification(id: $0) },
                dropCachedNotifications: { notifications.dropCachedRecords() })
        }
        var dependencies = APIDependencies(
            stores: build(keys.app), registry: registry,
            credentialChanges: credentialChanges.map { RedisCredentialChanges(subscriber: $0, channel: keys.credentialChanges) })
        dependencies.appStores = build
        dependencies.mediaSigner = MediaURLSigner(redis: redis, keys: keys)
        dependencies.console = ConsoleBackend(
            store: RedisConsoleStore(redis: redis, prefix: keys.prefix), users: RedisUserStore(redis: redis, keys: keys.forApp(.default)),
            queues: base.queues, ledger: RedisDeliveryLedger(redis: redis, keys: keys, retention: configuration.retention),
            notifications: { base.forApp($0) }, webhooks: { RedisWebhookStore(redis: redis, keys: keys.forApp($0)) },
            installations: { RedisInstallationStore(redis: redis, keys: keys.forApp($0)) })
        dependencies.applyScheduling = { [queues = base.queues] app, limits in
            try await JobQueue.setLimits(limits, of: app.rawValue, in: queues)
        }
        dependencies.forgetScheduling = { [queues = base.queues] app in try await JobQueue.forget(app: app.rawValue, in: queues) }
        return dependencies
    }
}
