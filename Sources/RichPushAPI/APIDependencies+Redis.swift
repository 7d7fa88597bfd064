package import Hiredis
package import Prometheus
package import RichPushQueue
package import RichPushStorage

extension APIDependencies {
    /// The API on Redis: its stores under `keys`, the queue of `queue` (all its partitions), the
    /// records kept as `configuration` says (retention, durability).
    package static func redis(redis: any RedisClient, keys: StorageKeys, queue: JobQueueConfiguration, configuration: APIConfiguration,
                             registry: PrometheusCollectorRegistry? = nil, credentialChanges: RedisSubscriber? = nil) -> APIDependencies {
        let build = { @Sendable (keys: StorageKeys) -> APIStores in
            let notifications = RedisNotificationStore(redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: queue),
                                                       retention: configuration.retention, durability: configuration.durability)
            return APIStores(
                users: RedisUserStore(redis: redis, keys: keys), apiKeys: RedisAPIKeyStore(redis: redis, keys: keys),
                installations: RedisInstallationStore(redis: redis, keys: keys), notifications: notifications,
                webhooks: RedisWebhookStore(redis: redis, keys: keys),
                ready: { _ = try await redis.send("PING") },
                backlog: { [queues = notifications.queues] in try await JobQueue.backlog(of: queues) },
                cachedNotification: { notifications.cachedNotification(id: $0) },
                dropCachedNotifications: { notifications.dropCachedRecords() })
        }
        var dependencies = APIDependencies(stores: build(keys), registry: registry, credentialChanges: credentialChanges, credentialChannel: keys.credentialChanges)
        dependencies.appStores = { app in build(keys.forApp(app)) }
        return dependencies
    }
}
