/// The many-at-once forms of ``NotificationStore``'s create and cancel paths, for the bulk send and
/// the console's bulk cancel: the default takes them one at a time; a store that can pipeline
/// (Redis) does them together.
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

    package func cancel(ids: [Int], progress: (Int) async -> Void) async throws -> [Result<CancelOutcome, any Error>] {
        var outcomes: [Result<CancelOutcome, any Error>] = []
        outcomes.reserveCapacity(ids.count)
        for id in ids {
            let outcome = try await cancel(id: id)
            outcomes.append(.success(outcome))
            if outcome.isCancelled { await progress(1) }
        }
        return outcomes
    }

    /// ``cancel(ids:progress:)`` for a caller that shows no progress.
    package func cancel(ids: [Int]) async throws -> [Result<CancelOutcome, any Error>] {
        try await cancel(ids: ids) { _ in }
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
