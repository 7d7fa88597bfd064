import RichPushCore
import ServiceLifecycle
import Synchronization

/// Credential changes in memory: the in-memory users and keys announce here what the Redis
/// stores publish, to whoever listens at that moment (an announcement with no listener is lost,
/// as on Redis Pub/Sub).
package final class InMemoryCredentialChanges: CredentialChanges {
    private let listeners = Mutex<[Int: AsyncStream<String>.Continuation]>([:])
    private let nextListener = Atomic<Int>(0)

    package init() {}

    /// Hands `change` (`user:<name>`, `key:<id>`) to every listener.
    package func announce(_ change: String) {
        for listener in listeners.withLock({ Array($0.values) }) { listener.yield(change) }
    }

    /// How many listen now (a test waits for the API's listener before it announces).
    package var listening: Int { listeners.withLock { $0.count } }

    package func listen(_ apply: @escaping @Sendable (String) -> Void) async throws {
        let (changes, continuation) = AsyncStream.makeStream(of: String.self)
        let id = nextListener.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[id] = continuation }
        defer { _ = listeners.withLock { $0.removeValue(forKey: id) } }
        for await change in changes.cancelOnGracefulShutdown() { apply(change) }
    }
}
