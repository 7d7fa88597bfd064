package import RichPushCore
package import RichPushQueue
package import RichPushStorage

/// What the console reads and acts on: its own keys (sessions, confirmations, audit), the
/// deployment's users (console users are the default app's), every queue partition, the
/// ledger that a dead letter's replay revives, and each app's notifications and webhooks.
package struct ConsoleBackend: Sendable {
    package var store: RedisConsoleStore
    package var users: RedisUserStore
    package var queues: [JobQueue]
    package var ledger: RedisDeliveryLedger
    /// Each app's notifications, to find them (the API's own stores).
    package var notifications: @Sendable (AppID) -> RedisNotificationStore
    /// Each app's webhooks, their attempts and dead letters (the API's own stores).
    package var webhooks: @Sendable (AppID) -> any WebhookStore
    /// Each app's installations, to find them and to check a test send's devices.
    package var installations: @Sendable (AppID) -> RedisInstallationStore

    package init(
        store: RedisConsoleStore, users: RedisUserStore, queues: [JobQueue], ledger: RedisDeliveryLedger,
        notifications: @escaping @Sendable (AppID) -> RedisNotificationStore, webhooks: @escaping @Sendable (AppID) -> any WebhookStore,
        installations: @escaping @Sendable (AppID) -> RedisInstallationStore
    ) {
        self.store = store
        self.users = users
        self.queues = queues
        self.ledger = ledger
        self.notifications = notifications
        self.webhooks = webhooks
        self.installations = installations
    }
}
