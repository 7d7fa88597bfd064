import Foundation
package import Hiredis
package import RichPushCore

/// An entry of the webhook outbox: one type of event about one notification, for one or more
/// devices (`items`, a JSON array of objects), written by the script that recorded it.
package struct WebhookOutboxEntry: Sendable, Hashable {
    /// The stream id; with the item's index, the events' stable ids.
    package var streamID: String
    /// Before the stream id in event ids: the partition (`q3:`) past one partition, else empty
    /// (stream ids are unique within one outbox only).
    package var eventIDPrefix: String = ""
    package var notification: String
    package var creator: String
    /// Nil for a type this version does not know (written by a newer one): dropped.
    package var type: WebhookEventType?
    /// Milliseconds since 1970.
    package var at: Int64
    package var items: [UInt8]
    /// The app whose notification it reports (`a`; absent: the default app).
    package var app: AppID = .default
}

/// A delivery waiting for its next attempt.
package struct WebhookDelivery: Sendable, Hashable {
    package var id: String
    package var webhook: String
    package var body: [UInt8]
    /// Attempts made so far.
    package var attempts: Int
    /// When the first attempt was made, ms since 1970 (the retry window counts from it).
    package var firstAttempt: Int64
    package var events: Int
    package var lastError: String

    package init(id: String, webhook: String, body: [UInt8], attempts: Int, firstAttempt: Int64, events: Int, lastError: String) {
        self.id = id
        self.webhook = webhook
        self.body = body
        self.attempts = attempts
        self.firstAttempt = firstAttempt
        self.events = events
        self.lastError = lastError
    }
}

/// The dispatcher's side: the outbox (a stream with one consumer group of every worker), the
/// deliveries waiting for a retry (a sorted set by due time, and a hash each), the attempts and
/// the dead letters.
extension RedisWebhookStore {
    package static let outboxGroup = "webhooks"

    /// Creates the outbox's consumer group if it is missing, from the outbox's first entry.
    package func ensureOutboxGroup() async throws {
        let reply = try await redis.pipeline([RedisCommand("XGROUP", "CREATE", keys.webhookOutbox, Self.outboxGroup, "0", "MKSTREAM")])[0]
        if let message = reply.errorMessage, !message.hasPrefix("BUSYGROUP") { throw RedisError(code: .server, message: message) }
    }

    /// Reads new outbox entries, waiting up to `block` (`reader`: a connection of its own whose
    /// command timeout exceeds `block`).
    package func readOutbox(on reader: RedisConnection, consumer: String, count: Int, block: Duration) async throws -> [WebhookOutboxEntry]
    {
        let reply = try await reader.send(
            "XREADGROUP", "GROUP", Self.outboxGroup, consumer, "COUNT", count, "BLOCK", max(1, block.milliseconds),
            "STREAMS", keys.webhookOutbox, ">")
        return (reply.array ?? []).flatMap { ($0.array?.dropFirst().first?.array ?? []).compactMap(outboxEntry) }
    }

    /// Takes over entries another dispatcher read and did not finish within `idle` (it died).
    package func reclaimOutbox(consumer: String, idle: Duration, count: Int) async throws -> [WebhookOutboxEntry] {
        let reply = try await redis.send(
            "XAUTOCLAIM", keys.webhookOutbox, Self.outboxGroup, consumer, idle.milliseconds, "0-0", "COUNT", count)
        return (reply.array?.dropFirst().first?.array ?? []).compactMap(outboxEntry)
    }

    /// Acknowledges and deletes handled entries: each was delivered or is waiting as a retry.
    package func finishOutbox(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        var ack = RedisCommand("XACK", keys.webhookOutbox, Self.outboxGroup)
        var delete = RedisCommand("XDEL", keys.webhookOutbox)
        for id in ids {
            ack.append(id)
            delete.append(id)
        }
        try await redis.sendAll([ack, delete])
    }

    /// Entries not yet handled (waiting for a dispatcher or being handled).
    package func outboxLength() async throws -> Int {
        try await redis.send("XLEN", keys.webhookOutbox).int ?? 0
    }

    func outboxEntry(_ entry: RedisValue) -> WebhookOutboxEntry? {
        guard let parts = entry.array, parts.count == 2, let id = parts[0].string, let flat = parts[1].array else { return nil }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            if let name = flat[index].string { fields[name] = flat[index + 1] }
        }
        guard let notification = fields["n"]?.string, let creator = fields["u"]?.string, let type = fields["t"]?.string,
            let items = fields["e"]?.bytes
        else { return nil }
        // An entry naming an app that is not an app id is nobody's: dropped (never the default app's).
        var app = AppID.default
        if let named = fields["a"]?.string {
            guard let parsed = AppID(validating: named) else { return nil }
            app = parsed
        }
        return WebhookOutboxEntry(
            streamID: id, eventIDPrefix: keys.partitions > 1 ? "\(keys.partition):" : "", notification: notification, creator: creator,
            type: WebhookEventType(rawValue: type), at: Int64(fields["at"]?.string ?? "") ?? 0, items: items, app: app)
    }

    // MARK: - Retries

    /// Keeps a delivery whose attempt failed, due again at `due` (ms); the hash outlives the
    /// retry window by a day in case its sorted-set entry is lost with a crash between the two.
    package func scheduleRetry(_ delivery: WebhookDelivery, due: Int64, window: Duration) async throws {
        let key = keys.webhookDelivery(delivery.id)
        _ = try await redis.transaction([
            RedisCommand(
                "HSET", key, "webhook", delivery.webhook, "body", delivery.body, "attempts", delivery.attempts,
                "first", delivery.firstAttempt, "events", delivery.events, "error", delivery.lastError),
            RedisCommand("EXPIRE", key, Int(window.components.seconds) + 86400),
            RedisCommand("ZADD", keys.webhookRetries, due, delivery.id),
        ])
    }

    /// Takes up to `count` deliveries whose time has come, pushing each one's due time `lease`
    /// ahead so no other dispatcher takes it meanwhile (a dispatcher that dies lets it come back).
    package func claimDueDeliveries(now: Int64, count: Int, lease: Duration) async throws -> [WebhookDelivery] {
        let ids =
            (try await redis.run(
                Self.claimScript,
                ClaimCall(
                    retries: keys.webhookRetries, now: now, count: count,
                    leasedUntil: now + Int64(lease.milliseconds))
            ).array ?? [])
            .compactMap(\.string)
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(
            ids.map { RedisCommand("HMGET", keys.webhookDelivery($0), "webhook", "body", "attempts", "first", "events", "error") })
        var deliveries: [WebhookDelivery] = []
        var orphans: [String] = []
        for (id, reply) in zip(ids, replies) {
            let values = reply.array ?? []
            guard values.count == 6, let webhook = values[0].string, let body = values[1].bytes else {
                orphans.append(id)
                continue
            }
            deliveries.append(
                WebhookDelivery(
                    id: id, webhook: webhook, body: body, attempts: values[2].string.flatMap { Int($0) } ?? 0,
                    firstAttempt: values[3].string.flatMap { Int64($0) } ?? now, events: values[4].string.flatMap { Int($0) } ?? 0,
                    lastError: values[5].string ?? ""))
        }
        if !orphans.isEmpty {
            var remove = RedisCommand("ZREM", keys.webhookRetries)
            for id in orphans { remove.append(id) }
            try await redis.send(remove)
        }
        return deliveries
    }

    /// The retries set, now (ms), the most to take and when their lease ends (ms).
    struct ClaimCall {
        let retries: String, now: Int64, count: Int, leasedUntil: Int64
    }

    /// The due deliveries' ids, each pushed to `leasedUntil`.
    static let claimScript = LuaScript<ClaimCall, Never>(
        [
            .key("retries", \.retries), .argument("now", \.now), .argument("count", \.count), .argument("leasedUntil", \.leasedUntil),
        ],
        body: """
            local due = redis.call('ZRANGEBYSCORE', retries, '-inf', now, 'LIMIT', 0, count)
            for _, id in ipairs(due) do redis.call('ZADD', retries, leasedUntil, id) end
            return due

            """)

    /// Deliveries waiting for a retry.
    package func retryCount() async throws -> Int {
        try await redis.send("ZCARD", keys.webhookRetries).int ?? 0
    }

    // MARK: - Outcomes

    /// What became of one attempt of a delivery.
    package enum AttemptResult: Sendable {
        case delivered
        case retry(due: Int64, window: Duration)
        case dead
    }

    /// Records one attempt and its consequence, atomically: done, waiting for the next attempt,
    /// or moved to the dead letters.
    package func record(_ attempt: WebhookAttempt, of delivery: WebhookDelivery, result: AttemptResult) async throws {
        let key = keys.webhookDelivery(delivery.id)
        var commands: [RedisCommand] = []
        switch result {
        case .delivered:
            commands += [RedisCommand("DEL", key), RedisCommand("ZREM", keys.webhookRetries, delivery.id)]
        case .retry(let due, let window):
            commands += [
                RedisCommand(
                    "HSET", key, "webhook", delivery.webhook, "body", delivery.body, "attempts", attempt.attempt,
                    "first", delivery.firstAttempt, "events", delivery.events, "error", attempt.error ?? ""),
                RedisCommand("EXPIRE", key, Int(window.components.seconds) + 86400),
                RedisCommand("ZADD", keys.webhookRetries, due, delivery.id),
            ]
        case .dead:
            let letter = WebhookDeadLetter(
                deliveryId: delivery.id, attempts: attempt.attempt,
                firstAttemptAt: UTCTimestamp.iso8601(milliseconds: delivery.firstAttempt),
                lastAttemptAt: attempt.at, lastError: attempt.error ?? "", events: delivery.events,
                body: String(decoding: delivery.body, as: UTF8.self))
            commands += [
                RedisCommand("LPUSH", keys.webhookDead(delivery.webhook), try Self.json(letter)),
                RedisCommand("LTRIM", keys.webhookDead(delivery.webhook), 0, Self.deadLettersKept - 1),
                RedisCommand("DEL", key),
                RedisCommand("ZREM", keys.webhookRetries, delivery.id),
            ]
        }
        commands += [
            RedisCommand("LPUSH", keys.webhookAttempts(delivery.webhook), try Self.json(attempt)),
            RedisCommand("LTRIM", keys.webhookAttempts(delivery.webhook), 0, Self.attemptsKept - 1),
        ]
        _ = try await redis.transaction(commands)
    }

    /// Forgets a delivery whose webhook is gone.
    package func discard(_ delivery: WebhookDelivery) async throws {
        try await redis.sendAll([
            RedisCommand("DEL", keys.webhookDelivery(delivery.id)), RedisCommand("ZREM", keys.webhookRetries, delivery.id),
        ])
    }

    package func attempts(webhook: String, limit: Int) async throws -> [WebhookAttempt] {
        guard Webhook.isValidID(webhook) else { return [] }
        return try await list(keys.webhookAttempts(webhook), limit: limit)
    }

    package func deadLetters(webhook: String, limit: Int) async throws -> [WebhookDeadLetter] {
        guard Webhook.isValidID(webhook) else { return [] }
        return try await list(keys.webhookDead(webhook), limit: limit)
    }

    package func replayDeadLetters(webhook: String) async throws -> Int {
        guard Webhook.isValidID(webhook) else { return 0 }
        let letters: [WebhookDeadLetter] = try await list(keys.webhookDead(webhook), limit: Self.deadLettersKept)
        guard !letters.isEmpty else { return 0 }
        let now = Self.nowMilliseconds()
        // Each goes back as a new delivery (same id, so a receiver that dedupes by it still can),
        // with a fresh retry window; the list goes in the same transaction.
        var commands: [RedisCommand] = []
        for letter in letters {
            let key = keys.webhookDelivery(letter.deliveryId)
            commands += [
                RedisCommand(
                    "HSET", key, "webhook", webhook, "body", letter.body, "attempts", 0, "first", now, "events", letter.events, "error",
                    letter.lastError),
                RedisCommand("EXPIRE", key, 2 * 86400),
                RedisCommand("ZADD", keys.webhookRetries, now, letter.deliveryId),
            ]
        }
        commands.append(RedisCommand("DEL", keys.webhookDead(webhook)))
        _ = try await redis.transaction(commands)
        return letters.count
    }

    private func list<T: Decodable>(_ key: String, limit: Int) async throws -> [T] {
        let items = try await redis.send("LRANGE", key, 0, max(0, limit - 1)).array ?? []
        return items.compactMap { $0.bytes.flatMap { try? JSONDecoder().decode(T.self, from: Data($0)) } }
    }

    static func json(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    package static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
