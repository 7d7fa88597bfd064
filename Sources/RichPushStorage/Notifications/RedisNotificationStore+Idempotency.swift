import Crypto
import Hiredis
package import RichPushCore

/// Idempotency keys: a request claims its key before it creates, the create completes it in
/// the same script, a failed create releases it.
extension RedisNotificationStore {
    func idempotencyKey(_ key: IdempotencyKey) -> String {
        keys.inPartition(partitionIndex(of: key)).idempotency(user: key.user, keyDigest: Hex.encode(SHA256.hash(data: Array(key.key.utf8))))
    }

    /// The partition of a notification created with this idempotency key (the key's claim is there).
    func partitionIndex(of key: IdempotencyKey) -> Int {
        guard keys.partitions > 1 else { return 0 }
        let digest = Array(SHA256.hash(data: Array("\(key.user)\n\(key.key)".utf8)))
        let value = digest.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        return value % keys.partitions
    }

    package func claim(_ key: IdempotencyKey) async throws -> IdempotencyClaim {
        try await claim([key])[0]
    }

    package func claim(_ keys: [IdempotencyKey]) async throws -> [IdempotencyClaim] {
        let calls = keys.map { Self.claimScript.encode(IdempotencyCall(key: idempotencyKey($0), fingerprint: $0.fingerprint)) }
        let replies = try await withDurability(Self.claimScript.script, calls: calls) { reply in
            // Only a replayed answer needs its notification on the replicas now (a fresh claim's
            // create waits for them itself): the script rewrote the key's expiry, so the WAIT
            // covers everything written before it on that master, the notification included.
            reply.array?.first?.string == "done"
        }
        return try replies.map { try Self.claim(from: $0.get()) }
    }

    private static func claim(from reply: RedisValue) throws -> IdempotencyClaim {
        let parts = reply.array ?? []
        switch parts.first?.string {
        case "claimed": return .claimed
        case "mismatch": return .mismatch
        // Not the claim's remaining life (up to a minute): the first request is about done.
        case "pending": return .inFlight(retryAfter: IdempotencyKey.inFlightRetryAfter)
        case "done":
            guard let id = parts.dropFirst().first?.string.flatMap(Int.init) else { fallthrough }
            return .completed(notification: id)
        default:
            throw RedisError(code: .unexpectedReply, message: "unexpected idempotency claim reply \(reply)")
        }
    }

    package func release(_ key: IdempotencyKey) async throws {
        try await release([key])
    }

    package func release(_ keys: [IdempotencyKey]) async throws {
        guard !keys.isEmpty else { return }
        for reply in try await redis.run(
            Self.releaseScript, calls: keys.map { IdempotencyCall(key: idempotencyKey($0), fingerprint: $0.fingerprint) })
        {
            try reply.throwingError()
        }
    }

    /// An idempotency key and the fingerprint of the request that claims or releases it.
    struct IdempotencyCall {
        let key: String, fingerprint: String
        /// How long a claim holds the key.
        var lifetime: Int { IdempotencyKey.claimLifetime.milliseconds }
    }

    /// Claims a free key (state pending, for the claim lifetime), or says who holds it: another
    /// request ("mismatch"), this request still being handled ("pending"), or its notification
    /// ("done", id).
    static let claimScript = LuaScript<IdempotencyCall, Never>(
        [
            .key("key", \.key), .argument("fingerprint", \.fingerprint), .argument("lifetime", \.lifetime),
        ],
        body: """
            local state = redis.call('HGET', key, 'state')
            if not state then
              redis.call('HSET', key, 'state', 'pending', 'fp', fingerprint)
              redis.call('PEXPIRE', key, lifetime)
              return {'claimed'}
            end
            if redis.call('HGET', key, 'fp') ~= fingerprint then return {'mismatch'} end
            if state == 'pending' then return {'pending'} end
            -- A write (the same expiry), so that a WAIT after this script covers the notification.
            redis.call('PEXPIRE', key, redis.call('PTTL', key))
            return {'done', redis.call('HGET', key, 'id')}

            """)

    /// Deletes a pending claim of this request.
    static let releaseScript = LuaScript<IdempotencyCall, Never>(
        [.key("key", \.key), .argument("fingerprint", \.fingerprint)],
        body: """
            if redis.call('HGET', key, 'state') == 'pending' and redis.call('HGET', key, 'fp') == fingerprint then
              return redis.call('DEL', key)
            end
            return 0

            """)
}
