public import RichPushCore

/// The stores the API's routes run on, each by its role's protocol, and the three things the
/// routes ask of the backend beyond them (is it up, how deep is the queue, what is cached).
///
/// ``buildApplication(configuration:dependencies:logger:onServerRunning:)`` takes these rather than
/// Redis types, so any backend that implements the roles can carry the routes;
/// ``APIDependencies/redis(redis:keys:queue:configuration:registry:credentialChanges:)`` builds
/// the Redis-backed ones.
public struct APIStores: Sendable {
    public var users: any UserStore
    public var apiKeys: any APIKeyStore
    public var installations: any InstallationStore
    public var notifications: any NotificationStore
    public var webhooks: any WebhookStore
    /// Throws when the backend does not answer (`GET /health/ready` says 503).
    public var ready: @Sendable () async throws -> Void
    /// Jobs waiting in the queue, all partitions together (new work is refused over the bound).
    public var backlog: @Sendable () async throws -> Int
    /// A notification record this replica already holds, without a round trip (nil: not held).
    public var cachedNotification: @Sendable (Int) -> RichNotification?
    /// Forgets the held records (a user's credentials changed).
    public var dropCachedNotifications: @Sendable () -> Void

    public init(users: any UserStore, apiKeys: any APIKeyStore, installations: any InstallationStore, notifications: any NotificationStore,
                webhooks: any WebhookStore, ready: @escaping @Sendable () async throws -> Void, backlog: @escaping @Sendable () async throws -> Int,
                cachedNotification: @escaping @Sendable (Int) -> RichNotification? = { _ in nil },
                dropCachedNotifications: @escaping @Sendable () -> Void = {}) {
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
