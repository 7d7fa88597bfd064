package import RichPushAPI
import RichPushCore
package import RichPushInMemory

/// The API's stores in memory (RichPushInMemory), for route tests that need no redis-server;
/// the real-Redis suites run the same routes on Redis. One app (the default); the queue is
/// not modelled, so the backlog is always 0.
package struct InMemoryAPI: Sendable {
    /// What the users and keys announce when they change (the API listens).
    package let changes = InMemoryCredentialChanges()
    package let users: InMemoryUserStore
    package let apiKeys: InMemoryAPIKeyStore
    package let installations = InMemoryInstallationStore()
    package let notifications = InMemoryNotifications()
    package let webhooks = InMemoryWebhookStore()

    package init() {
        users = InMemoryUserStore(changes: changes)
        apiKeys = InMemoryAPIKeyStore(users: users, changes: changes)
    }

    package var dependencies: APIDependencies {
        APIDependencies(
            stores: APIStores(
                users: users, apiKeys: apiKeys, installations: installations, notifications: notifications,
                webhooks: webhooks, ready: {}, backlog: { 0 }),
            credentialChanges: changes)
    }
}
