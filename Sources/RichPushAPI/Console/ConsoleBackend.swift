package import RichPushQueue
package import RichPushStorage

/// What the console reads and acts on: its own keys (sessions, confirmations, audit), the
/// deployment's users (console users are the default app's), every queue partition, and the
/// ledger that a dead letter's replay revives.
package struct ConsoleBackend: Sendable {
    package var store: RedisConsoleStore
    package var users: RedisUserStore
    package var queues: [JobQueue]
    package var ledger: RedisDeliveryLedger

    package init(store: RedisConsoleStore, users: RedisUserStore, queues: [JobQueue], ledger: RedisDeliveryLedger) {
        self.store = store
        self.users = users
        self.queues = queues
        self.ledger = ledger
    }
}
