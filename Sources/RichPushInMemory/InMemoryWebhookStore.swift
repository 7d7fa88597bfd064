package import RichPushCore
import Synchronization

/// Webhooks in memory, as far as the API's routes go: created (at most ``Webhook/maxPerUser`` per
/// owner), listed, read and deleted with the Redis store's rules. Nothing delivers from here, so
/// there are no attempts or dead letters: their routes answer empty lists.
package final class InMemoryWebhookStore: WebhookStore {
    private let all = Mutex<[String: Webhook]>([:])

    package init() {}

    package func create(_ webhook: Webhook) async throws -> Bool {
        all.withLock { all in
            guard all.values.count(where: { $0.owner == webhook.owner }) < Webhook.maxPerUser else { return false }
            all[webhook.id] = webhook
            return true
        }
    }

    package func webhook(id: String) async throws -> Webhook? {
        guard Webhook.isValidID(id) else { return nil }
        return all.withLock { $0[id] }
    }

    package func webhooks(owner: String?) async throws -> [Webhook] {
        all.withLock { $0.values.filter { owner == nil || $0.owner == owner } }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    package func delete(id: String) async throws -> Bool {
        all.withLock { $0.removeValue(forKey: id) != nil }
    }

    package func attempts(webhook: String, limit: Int) async throws -> [WebhookAttempt] { [] }

    package func deadLetters(webhook: String, limit: Int) async throws -> [WebhookDeadLetter] { [] }

    package func replayDeadLetters(webhook: String) async throws -> Int { 0 }
}
