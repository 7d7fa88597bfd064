package import RichPushCore

/// The stores the API's routes run on, each by its role's protocol, and the three things the
/// routes ask of the backend beyond them (is it up, how deep is the queue, what is cached).
///
/// ``buildApplication(configuration:dependencies:logger:onServerRunning:)`` takes these rather than
/// Redis types, so any backend that implements the roles can carry the routes;
/// ``APIDependencies/redis(redis:keys:queue:configuration:registry:credentialChanges:)`` builds
/// the Redis-backed ones.
package struct APIStores: Sendable {
    package var users: any UserStore
    package var apiKeys: any APIKeyStore
    package var installations: any InstallationStore
    package var notifications: any NotificationStore
    package var webhooks: any WebhookStore
    /// Throws when the backend does not answer (`GET /health/ready` says 503).
    package var ready: @Sendable () async throws -> Void
    /// Jobs waiting in the queue, all partitions together (new work is refused over the bound).
    package var backlog: @Sendable () async throws -> Int
    /// A notification record this replica already holds, without a round trip (nil: not held).
    package var cachedNotification: @Sendable (Int) -> RichNotification?
    /// Forgets the held records (a user's credentials changed).
    package var dropCachedNotifications: @Sendable () -> Void

    package init(
        users: any UserStore, apiKeys: any APIKeyStore, installations: any InstallationStore, notifications: any NotificationStore,
        webhooks: any WebhookStore, ready: @escaping @Sendable () async throws -> Void, backlog: @escaping @Sendable () async throws -> Int,
        cachedNotification: @escaping @Sendable (Int) -> RichNotification? = { _ in nil },
        dropCachedNotifications: @escaping @Sendable () -> Void = {}
    ) {
        self.users = users
        self.apiKeys = apiKeys
        self.installations = installations
        self.notifications = notifications
        self.webhooks = webhooks
        self.ready = ready
        self.backlog = backlog
        self.cachedNotification = cachedNotification
        self.dropCachedNotifications = dropCachedNotifications
    }
}
