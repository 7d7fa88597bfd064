import RichPushCore
import RichPushStorage
import Synchronization

/// The dispatcher's copy of every webhook, read again when older than `refresh` or on demand.
final class WebhookDirectory: Sendable {
    private let store: RedisWebhookStore
    private let refresh: Duration
    private let state = Mutex<(webhooks: [String: Webhook], loaded: ContinuousClock.Instant?)>(([:], nil))

    init(store: RedisWebhookStore, refresh: Duration) {
        self.store = store
        self.refresh = refresh
    }

    /// Webhooks by id; `fresh` reads them from Redis whatever the copy's age.
    func current(fresh: Bool = false) async throws -> [String: Webhook] {
        if !fresh,
            let cached = state.withLock({ state in
                state.loaded.flatMap { ContinuousClock.now - $0 < refresh ? state.webhooks : nil }
            })
        {
            return cached
        }
        let webhooks = Dictionary(try await store.webhooks(owner: nil).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        state.withLock { $0 = (webhooks, .now) }
        return webhooks
    }
}
