import Foundation
package import Hiredis
package import RichPushCore

/// Webhooks in Redis: a hash per webhook, a set of all ids and one per owner, under the
/// `{webhooks}` hash tag; and each partition's "wants" counters, which the scripts that record
/// delivery states read to decide whether an event goes into the outbox at all.
///
/// The counters are raised before a webhook is stored and lowered after it is deleted, so a crash
/// in between leaves them too high (an event nobody wants reaches the dispatcher, which drops
/// it), never too low (an event someone wants never emitted).
package struct RedisWebhookStore: WebhookStore {
    let redis: any RedisClient
    package let keys: StorageKeys
    /// Attempts kept per webhook (the newest).
    static let attemptsKept = 100
    /// Dead letters kept per webhook (the newest).
    static let deadLettersKept = 10_000

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    /// The same store for `app`'s webhooks.
    package func forApp(_ app: AppID) -> RedisWebhookStore {
        app == keys.app ? self : RedisWebhookStore(redis: redis, keys: keys.forApp(app))
    }

    /// The apps other than the default whose webhooks may have retries.
    package func appsWithWebhooks() async throws -> [AppID] {
        (try await redis.send("SMEMBERS", keys.webhookApps).array ?? []).compactMap { $0.string.flatMap { AppID(validating: $0) } }.filter {
            !$0.isDefault
        }
    }

    package func create(_ webhook: Webhook) async throws -> Bool {
        var commands = wantsCommands(webhook, by: 1)
        if !keys.app.isDefault { commands.append(RedisCommand("SADD", keys.webhookApps, keys.app.rawValue)) }
        try await redis.sendAll(commands)
        let fields: [any RedisArgument] = [
            "id", webhook.id, "owner", webhook.owner, "url", webhook.url,
            "events", webhook.events.sorted().map(\.rawValue).joined(separator: ","),
            "allUsers", webhook.allUsers ? 1 : 0, "description", webhook.description,
            "secret", webhook.secret, "created", webhook.createdAt,
        ]
        let stored =
            try await redis.run(
                Self.createScript,
                CreateCall(
                    hook: keys.webhook(webhook.id), all: keys.allWebhooks, owned: keys.webhooks(of: webhook.owner),
                    id: webhook.id, limit: Webhook.maxPerUser, fields: fields)
            ).int == 1
        if !stored { try await lowerWants(webhook) }
        return stored
    }

    /// A webhook's hash, the set of all and its owner's set; its id, the most one owner may
    /// have, and its field/value items.
    struct CreateCall {
        let hook: String, all: String, owned: String, id: String, limit: Int, fields: [any RedisArgument]
    }

    /// Adds the webhook unless its owner has `limit` already: 1 added, 0 not.
    static let createScript = LuaScript<CreateCall, Never>(
        [
            .key("hook", \.hook), .key("all", \.all), .key("owned", \.owned), .argument("id", \.id), .number("limit", \.limit),
            .list("fields", { $0.fields }),
        ],
        body: """
            if redis.call('SCARD', owned) >= limit then return 0 end
            redis.call('HSET', hook, unpack(ARGV, fieldsFrom, fieldsTo))
            redis.call('SADD', all, id)
            redis.call('SADD', owned, id)
            return 1

            """)

    package func webhook(id: String) async throws -> Webhook? {
        guard Webhook.isValidID(id) else { return nil }
        return Self.decode(try await redis.send("HGETALL", keys.webhook(id)))
    }

    package func webhooks(owner: String?) async throws -> [Webhook] {
        let ids = (try await redis.send("SMEMBERS", owner.map { keys.webhooks(of: $0) } ?? keys.allWebhooks).array ?? []).compactMap(
            \.string)
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HGETALL", keys.webhook($0)) })
        return replies.compactMap(Self.decode).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    package func delete(id: String) async throws -> Bool {
        guard let webhook = try await webhook(id: id) else { return false }
        let removed = try await redis.transaction([
            RedisCommand("DEL", keys.webhook(id), keys.webhookAttempts(id), keys.webhookDead(id)),
            RedisCommand("SREM", keys.allWebhooks, id),
            RedisCommand("SREM", keys.webhooks(of: webhook.owner), id),
        ])
        // Its deliveries still waiting for a retry are dropped by the dispatcher, which finds no webhook.
        guard (removed.first?.int ?? 0) > 0 else { return false }
        try await lowerWants(webhook)
        return true
    }

    /// Deletes every webhook of `owner` (the user is being removed); returns how many.
    package func deleteAll(owner: String) async throws -> Int {
        var deleted = 0
        for webhook in try await webhooks(owner: owner) where try await delete(id: webhook.id) { deleted += 1 }
        try await redis.send("DEL", keys.webhooks(of: owner))
        return deleted
    }

    /// In every partition: an event is recorded in the partition of its notification.
    private func lowerWants(_ webhook: Webhook) async throws {
        let calls = (0..<keys.partitions).map { LowerCall(wants: keys.inPartition($0).webhookWants, fields: Self.wantsFields(webhook)) }
        // Checked outside the async function: the same loop inline (`for … in try await …
        // { try … }`) crashes the Swift 6.3.1 optimizer (LLVM coroutine splitting, release builds).
        try Self.check(try await redis.run(Self.lowerScript, calls: calls))
    }

    private static func check(_ replies: [RedisValue]) throws(RedisError) {
        for reply in replies { _ = try reply.throwingError() }
    }

    /// A partition's wants hash and the fields to lower.
    struct LowerCall {
        let wants: String, fields: [any RedisArgument]
    }

    /// Lowers each field by one; a field at zero goes, and with the last one the key.
    static let lowerScript = LuaScript<LowerCall, Never>(
        [.key("wants", \.wants), .list("fields", { $0.fields })],
        body: """
            for i = fieldsFrom, fieldsTo do
              if redis.call('HINCRBY', wants, ARGV[i], -1) <= 0 then redis.call('HDEL', wants, ARGV[i]) end
            end
            return 1

            """)

    private func wantsCommands(_ webhook: Webhook, by step: Int) -> [RedisCommand] {
        (0..<keys.partitions).flatMap { partition in
            Self.wantsFields(webhook).map { RedisCommand("HINCRBY", keys.inPartition(partition).webhookWants, $0, step) }
        }
    }

    static func wantsFields(_ webhook: Webhook) -> [any RedisArgument] {
        webhook.events.sorted().map { "\($0.rawValue):\(webhook.allUsers ? "*" : webhook.owner)" }
    }

    static func decode(_ reply: RedisValue) -> Webhook? {
        let items = reply.array ?? []
        var fields: [String: String] = [:]
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { fields[name] = value }
        }
        guard let id = fields["id"], let owner = fields["owner"], let url = fields["url"], let secret = fields["secret"] else { return nil }
        let events = Set((fields["events"] ?? "").split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) })
        return Webhook(
            id: id, owner: owner, url: url, events: events, allUsers: fields["allUsers"] == "1", description: fields["description"] ?? "",
            secret: secret, createdAt: Int64(fields["created"] ?? "") ?? 0)
    }
}
