public import Foundation
public import Hiredis
import Synchronization

/// The provider token every worker of a fleet uses, kept in Redis: whichever worker needs a
/// token first creates it under a short lock, the others read it, and it is replaced after
/// `refreshAfter` (Apple: no more often than every 20 minutes, no less than every 60). So a fleet
/// never triggers `TooManyProviderTokenUpdates` by minting a token per worker, and never sends one
/// older than an hour (`ExpiredProviderToken`). Each process also keeps the token for a few
/// seconds, so the hot path does not read Redis per push.
public final class APNSSharedToken: Sendable {
    public struct Stored: Sendable, Hashable {
        public let token: String
        public let issuedAt: Date
    }

    let redis: any RedisClient
    let signer: APNSSigningKey
    /// `<prefix>:apns:token:<team>:<key id>` and its lock.
    let key: String
    let refreshAfter: Duration
    let localTTL: Duration
    private var refreshSeconds: Double { Double(refreshAfter.milliseconds) / 1000 }
    private let local = Mutex<(stored: Stored, until: ContinuousClock.Instant)?>(nil)

    public init(redis: any RedisClient, prefix: String, signer: APNSSigningKey, refreshAfter: Duration = .seconds(40 * 60),
                localTTL: Duration = .seconds(5)) {
        self.redis = redis
        self.signer = signer
        self.key = "\(prefix):apns:token:\(signer.teamID):\(signer.keyID)"
        self.refreshAfter = refreshAfter
        self.localTTL = localTTL
    }

    /// The token to send now.
    public func current(now: Date = Date()) async throws -> String {
        if let cached = local.withLock({ $0 }), cached.until > .now, now.timeIntervalSince(cached.stored.issuedAt) < refreshSeconds {
            return cached.stored.token
        }
        return try await fetchOrCreate(replacing: nil, now: now).token
    }

    /// Apple refused `rejected` (`ExpiredProviderToken`, `InvalidProviderToken`): replaces it in
    /// Redis unless another worker already did, and returns the token to retry with.
    public func replace(rejected: String, now: Date = Date()) async throws -> String {
        local.withLock { $0 = nil }
        return try await fetchOrCreate(replacing: rejected, now: now).token
    }

    private func fetchOrCreate(replacing rejected: String?, now: Date) async throws -> Stored {
        for _ in 0..<50 {
            let seen = try await read()
            if let stored = seen, stored.token != rejected, now.timeIntervalSince(stored.issuedAt) < refreshSeconds {
                remember(stored)
                return stored
            }
            // Stale, missing or rejected: one worker makes the next token, the others wait for it.
            let lockOwner = UUID().uuidString
            if try await redis.send("SET", key + ":lock", lockOwner, "NX", "PX", 5000).string == "OK" {
                let fresh = Stored(token: try signer.token(issuedAt: now), issuedAt: now)
                let reply = try await redis.run(Self.storeScript, keys: [key, key + ":lock"],
                                                arguments: [fresh.token, Int(now.timeIntervalSince1970), lockOwner, seen?.token ?? ""])
                if reply.int == 1 {
                    remember(fresh)
                    return fresh
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw APNSConfigurationError("no APNs provider token after 1 s: another worker holds the token lock and does not finish")
    }

    private func read() async throws -> Stored? {
        let fields = try await redis.send("HMGET", key, "token", "iat").array ?? []
        guard fields.count == 2, let token = fields[0].string, let iat = fields[1].string.flatMap(Double.init) else { return nil }
        return Stored(token: token, issuedAt: Date(timeIntervalSince1970: iat))
    }

    private func remember(_ stored: Stored) {
        local.withLock { $0 = (stored, .now + localTTL) }
    }

    /// KEYS: token hash, lock. ARGV: token, iat, lock owner, the token the caller found stale
    /// ('' for none). Stores the token and releases the lock if the caller still holds it and the
    /// stored token is still the stale one; else 0 (another worker replaced it: read that one).
    static let storeScript = RedisScript("""
    if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
    if (redis.call('HGET', KEYS[1], 'token') or '') ~= ARGV[4] then
      redis.call('DEL', KEYS[2])
      return 0
    end
    redis.call('HSET', KEYS[1], 'token', ARGV[1], 'iat', ARGV[2])
    redis.call('EXPIRE', KEYS[1], 3600)
    redis.call('DEL', KEYS[2])
    return 1
    """)
}
