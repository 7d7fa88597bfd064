/// The many-at-once forms of ``NotificationStore``'s create path, for the bulk send: the default
/// takes the drafts one at a time; a store that can pipeline (Redis) does them together.
extension NotificationStore {
    package func create(_ drafts: [NotificationDraft], hashing: ([UInt8]) -> String) async throws -> [Result<RichNotification, any Error>] {
        var outcomes: [Result<RichNotification, any Error>] = []
        outcomes.reserveCapacity(drafts.count)
        for draft in drafts {
            do {
                outcomes.append(.success(try await create(draft, hashing: hashing)))
            } catch let refusal as QuotaRefusal {
                outcomes.append(.failure(refusal))
            }
        }
        return outcomes
    }

    package func claim(_ keys: [IdempotencyKey]) async throws -> [IdempotencyClaim] {
        var claims: [IdempotencyClaim] = []
        claims.reserveCapacity(keys.count)
        for key in keys { claims.append(try await claim(key)) }
        return claims
    }

    package func release(_ keys: [IdempotencyKey]) async throws {
        for key in keys { try await release(key) }
    }
}
