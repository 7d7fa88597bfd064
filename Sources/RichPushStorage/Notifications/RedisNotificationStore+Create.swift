import Hiredis
package import RichPushCore
import RichPushQueue

/// Creating notifications: one script call per notification (record, payload, status, creator's
/// index, job, and on one Redis the quota charge and the idempotency key's completion), many of
/// them in one pipelined round trip.
extension RedisNotificationStore {
    /// Creates sent at the same time go together (``Coalescer``): under load, one script call
    /// makes the notifications of many requests.
    package func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification {
        let hash = hashing(draft.payload)
        return try await concurrentCreates.submit(HashedDraft(draft: draft, hash: hash)) { [self] drafts in
            try await create(drafts.map(\.draft), hashes: drafts.map(\.hash))
        }
    }

    package func create(_ drafts: [NotificationDraft], hashing: ([UInt8]) -> String) async throws -> [Result<RichNotification, any Error>] {
        try await create(drafts, hashes: drafts.map { hashing($0.payload) })
    }

    /// A draft with its payload's hash.
    struct HashedDraft: Sendable {
        let draft: NotificationDraft
        let hash: String
    }

    private func create(_ drafts: [NotificationDraft], hashes: [String]) async throws -> [Result<RichNotification, any Error>] {
        var outcomes = [Result<RichNotification, any Error>?](repeating: nil, count: drafts.count)
        // The quota is charged in the create's own script on one Redis; on a cluster its keys are
        // in another slot, so it is charged first, apart (all of the batch's in one pipeline).
        let chargesInCreate = redis.topology == .single
        if !chargesInCreate {
            for (index, refusal) in try await chargeApart(drafts) { outcomes[index] = .failure(refusal) }
        }
        var pending = drafts.indices.filter { outcomes[$0] == nil }
        // An id whose record exists (the counter went back: AOF everysec, a failover to a lagging
        // replica) is refused by the script; the rest of that block is dropped and new ids taken.
        for _ in 0..<Self.maxIDAttempts where !pending.isEmpty {
            let sequences = try await ids.next(redis, count: pending.count)
            let now = JobQueue.nowMilliseconds()
            let calls = zip(pending, sequences).map { index, sequence in
                createCall(drafts[index], hash: hashes[index], sequence: sequence, now: now, chargesInCreate: chargesInCreate)
            }
            // One script call per partition (its keys share the partition's hash tag) and up to
            // `notificationsPerCall` notifications, all in one pipeline.
            let groups = Dictionary(grouping: calls.indices, by: { calls[$0].partition }).values
                .flatMap { positions in
                    stride(from: 0, to: positions.count, by: Self.notificationsPerCall).map {
                        Array(positions[$0..<min($0 + Self.notificationsPerCall, positions.count)])
                    }
                }
            let replies = try await withDurability(
                Self.createScript.script,
                calls: groups.map { group in
                    Self.createScript.encode(group.map { calls[$0].item })
                }
            ) { reply in reply.array?.contains { $0.int == 1 } == true }
            var taken: [Int] = []
            for (group, reply) in zip(groups, replies) {
                let values: [RedisValue]
                do {
                    let value = try reply.get()
                    guard let array = value.array, array.count == group.count else {
                        throw RedisError.unexpected(value, expected: "\(group.count) create replies")
                    }
                    values = array
                } catch {
                    for position in group { outcomes[pending[position]] = .failure(error) }
                    continue
                }
                for (position, value) in zip(group, values) {
                    let index = pending[position]
                    let call = calls[position]
                    if value.array != nil {
                        let refusal = call.quota.map { quota in
                            Result { try Self.refusal(value, user: drafts[index].creator, limits: quota) }
                        }
                        switch refusal {
                        case .success(let refusal?)?: outcomes[index] = .failure(refusal)
                        case .failure(let error)?: outcomes[index] = .failure(error)
                        default: outcomes[index] = .failure(RedisError.unexpected(value, expected: "1, 0 or a quota refusal"))
                        }
                    } else if value.int == 1 {
                        payloads.insert(drafts[index].payload, for: hashes[index], cost: drafts[index].payload.count)
                        records.cache.insert(call.record, for: call.record.id, cost: 1)
                        outcomes[index] = .success(call.record)
                    } else {
                        taken.append(index)
                    }
                }
            }
            if !taken.isEmpty { ids.discardBlock() }
            pending = taken
        }
        for index in pending {
            outcomes[index] = .failure(
                RedisError(
                    code: .unexpectedReply,
                    message: "\(Self.maxIDAttempts) notification ids in a row were taken: the id counter went back"))
        }
        return outcomes.map { $0! }
    }

    static let maxIDAttempts = 200
    /// Most notifications one create script call makes (each ~10 µs of Redis time: a call of
    /// 100 holds Redis about a millisecond).
    static let notificationsPerCall = 100

    /// One create's script call.
    struct CreateCall {
        let item: CreateItem
        let record: RichNotification
        let partition: Int
        /// The quota the script charges (nil: none, or charged apart).
        let quota: QuotaLimits?
    }

    /// The create script's item for `draft` as notification number `sequence` (see
    /// ``createScript``; a call makes one or more of them).
    func createCall(_ draft: NotificationDraft, hash: String, sequence: Int, now: Int64, chargesInCreate: Bool) -> CreateCall {
        // Partition p gets ids ≡ p (mod P): round robin, or by the idempotency key, whose claim
        // lives in that partition (the create completes it in the same script).
        let partition = draft.idempotency.map(partitionIndex(of:)) ?? sequence % keys.partitions
        let id = sequence * keys.partitions + partition
        let keys = self.keys.inPartition(partition)
        let queue = queues[partition]
        var record = RichNotification(
            id: id, message: draft.message, richType: draft.richType, contentType: draft.contentType,
            payloadHash: hash, payloadSize: draft.payload.count, creator: draft.creator, target: draft.target, createdAt: now,
            delivery: draft.delivery, properties: draft.properties, native: draft.native)
        record.templatesOnly = draft.templatesOnly
        var request = RichPushJob.request(notification: id, app: keys.app)
        if let installations = draft.installations {
            // Named devices, as a fan-out's share is sent, in the app's `now` lane (it is a few devices).
            request = RichPushJob.request(notification: id, installations: installations, app: keys.app)
            request.lane = .now
        }
        let job = queue.admission(for: request, now: now)
        // A send in the future waits in the queue's delayed set, where due retries wait: the
        // workers' maintenance moves it into the stream when its time comes.
        let sendAt = draft.sendAt.flatMap { $0 > now ? $0 : nil }
        var fields: [any RedisArgument] = []
        func set(_ field: RecordField, _ value: any RedisArgument) { fields += [field.rawValue, value] }
        set(.message, record.message)
        set(.type, record.richType.rawValue)
        set(.contentType, record.contentType)
        set(.payload, hash)
        set(.size, record.payloadSize)
        set(.creator, record.creator)
        set(.target, record.target)
        set(.created, now)
        // Only what the sender set: records without options stay as small as before.
        if let ttl = draft.delivery.ttl { set(.ttl, Int(ttl.components.seconds)) }
        if let collapse = draft.delivery.collapseID { set(.collapse, collapse) }
        if let priority = draft.delivery.priority { set(.priority, priority.rawValue) }
        if let sendAt { set(.sendAt, sendAt) }
        if let throttle = draft.delivery.throttlePerMinute { set(.throttle, throttle) }
        if let mode = draft.delivery.mode { set(.mode, mode.rawValue) }
        if let properties = draft.properties {
            set(.properties, properties.json)
            if let locale = properties.defaultLocale { set(.locale, locale) }
        }
        if let native = draft.native { set(.native, native.json) }
        if draft.templatesOnly { set(.templatesOnly, 1) }
        // Another app's record names it, so the webhook events it causes name it too.
        if !keys.app.isDefault { set(.app, keys.app.rawValue) }
        // The status's first field: it lives in the record's hash.
        fields += [StatusField.state.rawValue, (sendAt == nil ? DeliveryState.queued : .scheduled).rawValue]
        // With an idempotency key, the same script completes it: no crash can leave a created
        // notification whose key a retry would not find.
        let idempotency = draft.idempotency.map {
            IdempotencyCompletion(key: idempotencyKey($0), ttl: Int(IdempotencyKey.lifetime.components.seconds))
        }
        let quota = chargesInCreate ? Self.chargeable(draft) : nil
        let item = CreateItem(
            payloadKey: keys.payload(hash), record: keys.notification(id), index: keys.created(by: record.creator),
            delayed: queue.configuration.delayedKey, ttl: Int(retention.components.seconds), id: id,
            payload: draft.payload, sendAt: sendAt ?? 0,
            quota: quota.map { quotaCharge(user: draft.creator, bytes: draft.payload.count, limits: $0) }, idempotency: idempotency,
            fields: fields, job: job)
        return CreateCall(item: item, record: record, partition: partition, quota: quota)
    }

    /// The draft's quota, unless it has none or it is unlimited.
    static func chargeable(_ draft: NotificationDraft) -> QuotaLimits? {
        draft.quota.flatMap { $0.isUnlimited ? nil : $0 }
    }

    /// On a cluster: charges the drafts' quotas in one pipeline, before their creates; the
    /// refused ones by index.
    private func chargeApart(_ drafts: [NotificationDraft]) async throws -> [(Int, any Error)] {
        let charged = drafts.indices.compactMap { index in Self.chargeable(drafts[index]).map { (index, $0) } }
        guard !charged.isEmpty else { return [] }
        let replies = try await redis.run(
            Self.quotaScript,
            calls: charged.map { index, limits in
                quotaCharge(user: drafts[index].creator, bytes: drafts[index].payload.count, limits: limits)
            })
        var refused: [(Int, any Error)] = []
        for ((index, limits), reply) in zip(charged, replies) {
            do {
                if let refusal = try Self.refusal(try reply.throwingError(), user: drafts[index].creator, limits: limits) {
                    refused.append((index, refusal))
                }
            } catch {
                refused.append((index, error))
            }
        }
        return refused
    }

    /// Runs `script` once per call, all in one pipeline; an error reply is that call's failure.
    /// With replicated durability `WAIT` follows in the same pipeline (on one Redis once, after
    /// all the calls: it covers every write before it; on a cluster after each call, on its
    /// node's connection), and a call whose reply `needsReplicas` fails with a transient
    /// `RedisError(.timeout)` when fewer replicas acknowledged in time. The notification exists on
    /// the master all the same, with its idempotency key: a client that retries with the key gets
    /// the first answer (once the replicas have it: ``claim(_:)`` waits for them too), not a
    /// second notification.
    func withDurability(
        _ script: RedisScript, calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])],
        needsReplicas: (RedisValue) -> Bool
    ) async throws -> [Result<RedisValue, RedisError>] {
        guard !calls.isEmpty else { return [] }
        guard case .replicated(let replicas, let timeout) = durability else {
            return try await redis.run(script, calls: calls).map(Self.result)
        }
        let commands = calls.map { script.command(keys: $0.keys, arguments: $0.arguments) }
        let wait = RedisCommand("WAIT", replicas, max(1, timeout.milliseconds))
        let waitEach = redis.topology == .cluster
        func withWaits(_ commands: [RedisCommand]) -> [RedisCommand] { waitEach ? commands.flatMap { [$0, wait] } : commands + [wait] }
        var replies = try Self.waited(try await redis.pipeline(withWaits(commands)), waitEach: waitEach, count: commands.count)
        let missing = replies.indices.filter { replies[$0].reply.errorMessage?.hasPrefix("NOSCRIPT") == true }
        if !missing.isEmpty {
            // Only the calls that did not run, again with their WAIT after them.
            let again = try await redis.pipeline([RedisCommand("SCRIPT", "LOAD", script.source)] + withWaits(missing.map { commands[$0] }))
            try again[0].throwingError()
            for (index, reply) in zip(missing, try Self.waited(Array(again.dropFirst()), waitEach: waitEach, count: missing.count)) {
                replies[index] = reply
            }
        }
        return replies.map { reply, acknowledged in
            Self.result(reply).flatMap { value in
                guard needsReplicas(value), acknowledged < replicas else { return .success(value) }
                return .failure(
                    RedisError(
                        code: .timeout,
                        message: "WAIT: \(acknowledged) of \(replicas) replicas acknowledged the write within \(timeout.milliseconds) ms"))
            }
        }
    }

    /// Each call's reply and the replicas that acknowledged it, from a pipeline's replies with
    /// `WAIT` after each call or once after all.
    private static func waited(_ replies: [RedisValue], waitEach: Bool, count: Int) throws -> [(reply: RedisValue, acknowledged: Int)] {
        guard replies.count == (waitEach ? 2 * count : count + 1) else {
            throw RedisError(code: .unexpectedReply, message: "\(replies.count) replies to \(count) calls and their WAIT")
        }
        if waitEach {
            return try stride(from: 0, to: replies.count, by: 2).map { (replies[$0], try replies[$0 + 1].throwingError().int ?? 0) }
        }
        let acknowledged = try replies[count].throwingError().int ?? 0
        return replies.prefix(count).map { ($0, acknowledged) }
    }

    private static func result(_ reply: RedisValue) -> Result<RedisValue, RedisError> {
        Result { () throws(RedisError) in try reply.throwingError() }
    }
}
