import Crypto
import HTTPTypes
import Hiredis
import Hummingbird
import RichPushCore

/// `POST /api/notifications/batch`: up to ``maxBatchItems`` notifications in one request, each
/// checked, keyed and created as `POST /api/notifications` would, with the store's work done
/// together (one claim of the idempotency keys, one create, one release: pipelined on Redis) and
/// one result per item. An item's refusal is that item's; only what stops them all (a body that is
/// not a batch, a full backlog, Redis away) refuses the request.
extension NotificationRoutes {
    /// Notifications one batch may hold; more are 422 `too_many_items` (none: `empty_batch`).
    static let maxBatchItems = 1000

    /// An item that passed the checks, on its way to the store.
    struct Pending {
        let index: Int
        var draft: NotificationDraft
        let key: IdempotencyKey?
    }

    @Sendable func createBatch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.send)
        // A slot before the body is read: a batch waiting for one holds no body in memory.
        return try await batches.run { try await createBatch(request, user: user, context: context) }
    }

    private func createBatch(_ request: Request, user: User, context: APIRequestContext) async throws -> Response {
        guard request.headers[Self.idempotencyHeader] == nil else {
            throw APIError.badRequest(
                "a batch takes no Idempotency-Key header: give each item its own 'idempotencyKey'", code: "bad_idempotency_key")
        }
        let dryRun = try Self.isDryRun(request)
        let type = request.headers[.contentType].map { MediaType.essence(of: $0).lowercased() } ?? ""
        guard type == "application/json" else {
            throw APIError.unsupportedMediaType("a batch is application/json (got '\(type.isEmpty ? "no Content-Type" : type)')")
        }
        let body = try await request.body.collect(upTo: configuration.maxBatchBodyBytes)
        let items = try NotificationBatchInput.items(body, maxItems: Self.maxBatchItems, user: user.name)

        var outcomes = [BatchOutcome?](repeating: nil, count: items.count)
        var pending: [Pending] = []
        pending.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do {
                let item = try item.get()
                pending.append(
                    Pending(
                        index: index,
                        draft: try item.input.draft(
                            as: user, maxPayloadBytes: configuration.maxPayloadBytes, defaultLocale: defaultLocale,
                            defaultDelivery: defaultDelivery),
                        key: item.idempotencyKey))
            } catch {
                outcomes[index] = .rejected(error as? APIError ?? Self.itemError(error, context: context))
            }
        }
        if dryRun {
            // Every check a create makes; nothing claimed, stored, charged or sent.
            for item in pending { outcomes[item.index] = .checked(target: item.draft.target) }
        } else {
            try await create(pending, into: &outcomes, context: context)
        }
        let answer = outcomes.map {
            $0 ?? .rejected(APIError(.internalServerError, code: "internal", message: "internal error; the request id is \(context.id)"))
        }
        let accepted = answer.count(where: \.isAccepted)
        context.logger.info(
            "notification batch",
            metadata: [
                "batch.items": "\(answer.count)", "batch.accepted": "\(accepted)", "batch.rejected": "\(answer.count - accepted)",
                "batch.dry_run": "\(dryRun)",
            ])
        return Self.batchAnswer(answer, dryRun: dryRun)
    }

    /// Claims the items' keys, creates what is to be created and frees the keys of what failed,
    /// each in one call to the store; fills in the outcome of every pending item.
    private func create(_ pending: [Pending], into outcomes: inout [BatchOutcome?], context: APIRequestContext) async throws {
        // A key given twice in one batch is claimed once: the repeat shares the first item's
        // outcome (as a replay), or is refused if it came with another item.
        var firstWithKey: [String: (index: Int, fingerprint: String)] = [:]
        var repeats: [(item: Pending, first: (index: Int, fingerprint: String))] = []
        var keyed: [Pending] = []
        var creating: [Pending] = []
        for item in pending {
            guard let key = item.key else {
                creating.append(item)
                continue
            }
            if let first = firstWithKey[key.key] {
                repeats.append((item, first))
            } else {
                firstWithKey[key.key] = (item.index, key.fingerprint)
                keyed.append(item)
            }
        }
        creating += try await claim(keyed, into: &outcomes)
        // In the items' order: their ids ascend with it, and a quota spent part-way refuses the last ones.
        creating.sort { $0.index < $1.index }
        try await store(creating, into: &outcomes, context: context)
        for (item, first) in repeats {
            guard item.key?.fingerprint == first.fingerprint else {
                outcomes[item.index] = .rejected(Self.keyReused)
                continue
            }
            switch outcomes[first.index] {
            case .accepted(let id, let target, _)?: outcomes[item.index] = .accepted(id: id, target: target, replayed: true)
            case let other: outcomes[item.index] = other
            }
        }
    }

    /// Claims the keys of `keyed` in one call: the items whose claim went through, to be created
    /// (their drafts now complete their keys); the others' outcomes (replayed, in flight, reused).
    private func claim(_ keyed: [Pending], into outcomes: inout [BatchOutcome?]) async throws -> [Pending] {
        guard !keyed.isEmpty else { return [] }
        let claims = try await notifications.claim(keyed.compactMap(\.key))
        guard claims.count == keyed.count else { throw BatchStoreError("\(claims.count) claims for \(keyed.count) keys") }
        var claimed: [Pending] = []
        for (item, claim) in zip(keyed, claims) {
            switch claim {
            case .claimed:
                var item = item
                item.draft.idempotency = item.key
                claimed.append(item)
            case .completed(let id):
                // The same item again: the first answer, nothing created.
                outcomes[item.index] = .accepted(id: id, target: item.draft.target, replayed: true)
            case .inFlight(let retryAfter):
                outcomes[item.index] = .rejected(Self.keyInUse(retryAfter: retryAfter))
            case .mismatch:
                outcomes[item.index] = .rejected(Self.keyReused)
            }
        }
        return claimed
    }

    /// Creates `items` in one call (after the backlog check), each charged to the quota, and frees
    /// in one call the keys of those that failed. Throws, with every claimed key freed, when the
    /// store could not be reached for the batch.
    private func store(_ items: [Pending], into outcomes: inout [BatchOutcome?], context: APIRequestContext) async throws {
        guard !items.isEmpty else { return }
        var items = items
        let results: [Result<RichNotification, any Error>]
        do {
            try await backlog.check()
            // The app's limits, item by item: one over them is refused alone, its key freed.
            items = try await withinAppLimits(items, outcomes: &outcomes, context: context)
            let quota = configuration.quotas.notificationLimits
            results = try await notifications.create(
                items.map { item in
                    var draft = item.draft
                    draft.quota = quota
                    return draft
                }
            ) { bytes in
                Hex.encode(SHA256.hash(data: bytes))
            }
            guard results.count == items.count else { throw BatchStoreError("\(results.count) outcomes for \(items.count) drafts") }
        } catch {
            // Nothing known to be created: the keys are free again for the client's retry (a
            // key whose notification was created after all is completed, and stays so).
            await release(items.compactMap(\.draft.idempotency), context: context)
            throw error
        }
        var failedKeys: [IdempotencyKey] = []
        for (item, result) in zip(items, results) {
            switch result {
            case .success(let record):
                outcomes[item.index] = .accepted(id: record.id, target: record.target, replayed: false)
            case .failure(let error):
                outcomes[item.index] = .rejected(Self.itemError(error, context: context))
                if let key = item.draft.idempotency { failedKeys.append(key) }
            }
        }
        await release(failedKeys, context: context)
    }

    /// Frees keys whose create failed, so a retry can go ahead at once (or, if Redis cannot be
    /// told now, when the claims expire).
    func release(_ keys: [IdempotencyKey], context: APIRequestContext) async {
        guard !keys.isEmpty else { return }
        do {
            try await notifications.release(keys)
        } catch {
            context.logger.warning("cannot release idempotency keys", metadata: ["error": "\(error)", "batch.keys": "\(keys.count)"])
        }
    }

    /// The answer one item's failure gets: what the error middleware gives a single create.
    static func itemError(_ error: any Error, context: APIRequestContext) -> APIError {
        ErrorMiddleware<APIRequestContext>.apiError(for: error, logger: context.logger, requestID: context.id)
    }
}

/// The store answered a batch call with a different number of answers than it was asked for.
struct BatchStoreError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
