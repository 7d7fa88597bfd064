import Crypto
package import RichPushCore
import Hiredis

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
        let calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])] = keys.map { key in
            ([idempotencyKey(key)], [key.fingerprint, IdempotencyKey.claimLifetime.milliseconds])
        }
        let replies = try await withDurability(Self.claimScript, calls: calls) { reply in
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
        for reply in try await redis.run(Self.releaseScript, calls: keys.map { ([idempotencyKey($0)], [$0.fingerprint]) }) {
            try reply.throwingError()
        }
    }

    /// KEYS: the idempotency key. ARGV: fingerprint, claim lifetime in ms. Claims a free key
    /// (state pending, for the claim lifetime), or says who holds it: another request ("mismatch"),
    /// this request still being handled ("pending"), or its notification ("done", id).
    static let claimScript = RedisScript("""
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then
      redis.call('HSET', KEYS[1], 'state', 'pending', 'fp', ARGV[1])
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
      return {'claimed'}
    end
    if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return {'mismatch'} end
    if state == 'pending' then return {'pending'} end
    -- A write (the same expiry), so that a WAIT after this script covers the notification.
    redis.call('PEXPIRE', KEYS[1], redis.call('PTTL', KEYS[1]))
    return {'done', redis.call('HGET', KEYS[1], 'id')}
    """)

    /// KEYS: the idempotency key. ARGV: fingerprint. Deletes a pending claim of this request.
    static let releaseScript = RedisScript("""
    if redis.call('HGET', KEYS[1], 'state') == 'pending' and redis.call('HGET', KEYS[1], 'fp') == ARGV[1] then
      return redis.call('DEL', KEYS[1])
    end
    return 0
    """)
}
