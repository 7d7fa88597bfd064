package import Foundation
package import Hiredis
import Synchronization

/// A bearer token every worker of a fleet uses, kept in Redis: whichever worker needs one first
/// mints it under a short lock, the others read it, and it is replaced when it is older than
/// `refreshAfter` or within `expiryMargin` of its expiry. A token the platform refuses is
/// replaced once, by one worker. Each process also keeps the token for a few seconds, so the hot
/// path does not read Redis per push.
///
/// APNs provider tokens (minted locally; Apple refuses a team that mints too often) and FCM
/// access tokens (minted by Google's token endpoint; one exchange per fleet, not per worker) are
/// both kept this way.
package final class SharedToken: Sendable {
    package struct Minted: Sendable, Hashable {
        package let token: String
        package let issuedAt: Date
        /// When the platform stops accepting it, if it says (FCM's `expires_in`).
        package let expiresAt: Date?

        package init(token: String, issuedAt: Date, expiresAt: Date? = nil) {
            self.token = token
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }
    }

    /// Makes a new token at the given moment (may call the network).
    package typealias Mint = @Sendable (Date) async throws -> Minted

    let redis: any RedisClient
    /// The token's hash; its lock is `<key>:lock`.
    package let key: String
    let refreshAfter: Duration
    let expiryMargin: Duration
    let localTTL: Duration
    let lockTTL: Duration
    private let mint: Mint
    private let local = Mutex<(minted: Minted, until: ContinuousClock.Instant)?>(nil)

    package init(
        redis: any RedisClient, key: String, refreshAfter: Duration, expiryMargin: Duration = .seconds(300),
        localTTL: Duration = .seconds(5), lockTTL: Duration = .seconds(5), mint: @escaping Mint
    ) {
        self.redis = redis
        self.key = key
        self.refreshAfter = refreshAfter
        self.expiryMargin = expiryMargin
        self.localTTL = localTTL
        self.lockTTL = lockTTL
        self.mint = mint
    }

    /// The token to send now.
    package func current(now: Date = Date()) async throws -> String {
        if let cached = local.withLock({ $0 }), cached.until > .now, isFresh(cached.minted, now: now) {
            return cached.minted.token
        }
        return try await fetchOrMint(replacing: nil, now: now).token
    }

    /// The platform refused `rejected`: replaces it in Redis unless another worker already did,
    /// and returns the token to retry with.
    package func replace(rejected: String, now: Date = Date()) async throws -> String {
        local.withLock { $0 = nil }
        return try await fetchOrMint(replacing: rejected, now: now).token
    }

    func isFresh(_ minted: Minted, now: Date) -> Bool {
        if now.timeIntervalSince(minted.issuedAt) >= Self.seconds(refreshAfter) { return false }
        if let expiresAt = minted.expiresAt, now.addingTimeInterval(Self.seconds(expiryMargin)) >= expiresAt { return false }
        return true
    }

    private func fetchOrMint(replacing rejected: String?, now: Date) async throws -> Minted {
        let attempts = max(1, Int(Self.seconds(lockTTL) * 1000 / 20) + 50)
        for _ in 0..<attempts {
            let seen = try await read()
            if let stored = seen, stored.token != rejected, isFresh(stored, now: now) {
                remember(stored)
                return stored
            }
            // Stale, missing or rejected: one worker makes the next token, the others wait for it.
            let lockOwner = UUID().uuidString
            if try await redis.send("SET", key + ":lock", lockOwner, "NX", "PX", Int(Self.seconds(lockTTL) * 1000)).string == "OK" {
                // Another worker may have stored a token between our read and our lock: use it
                // rather than mint a second one (each mint is a token exchange, or a new APNs token).
                let latest = try await read()
                if let latest, latest.token != rejected, isFresh(latest, now: now) {
                    _ = try await redis.run(Self.unlockScript, UnlockCall(lock: key + ":lock", owner: lockOwner))
                    remember(latest)
                    return latest
                }
                let fresh: Minted
                do {
                    fresh = try await mint(now)
                } catch {
                    _ = try? await redis.run(Self.unlockScript, UnlockCall(lock: key + ":lock", owner: lockOwner))
                    throw error
                }
                let expires = fresh.expiresAt.map { String($0.timeIntervalSince1970) } ?? ""
                let reply = try await redis.run(
                    Self.storeScript,
                    StoreCall(
                        hash: key, lock: key + ":lock", token: fresh.token,
                        issuedAt: String(fresh.issuedAt.timeIntervalSince1970), expires: expires, owner: lockOwner,
                        stale: latest?.token ?? ""))
                if reply.int == 1 {
                    remember(fresh)
                    return fresh
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw SharedTokenError("no token for \(key): another worker holds the lock and does not finish")
    }

    private func read() async throws -> Minted? {
        let fields = try await redis.send("HMGET", key, "token", "iat", "exp").array ?? []
        guard fields.count == 3, let token = fields[0].string, let iat = fields[1].string.flatMap(Double.init) else { return nil }
        let expiresAt = fields[2].string.flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
        return Minted(token: token, issuedAt: Date(timeIntervalSince1970: iat), expiresAt: expiresAt)
    }

    private func remember(_ minted: Minted) {
        local.withLock { $0 = (minted, .now + localTTL) }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The token's hash and lock; the token, when it was issued and expires ('' for never, s),
    /// the lock's owner, and the token the caller found stale ('' for none).
    struct StoreCall {
        let hash: String, lock: String, token: String, issuedAt: String, expires: String, owner: String, stale: String
    }

    /// Stores the token and releases the lock if the caller still holds it and the stored token
    /// is still the stale one; else 0 (another worker replaced it: read that one).
    static let storeScript = LuaScript<StoreCall, Never>(
        [
            .key("hash", \.hash), .key("lock", \.lock), .argument("token", \.token), .argument("issuedAt", \.issuedAt),
            .argument("expires", \.expires),
            .argument("owner", \.owner), .argument("stale", \.stale),
        ],
        body: """
            if redis.call('GET', lock) ~= owner then return 0 end
            if (redis.call('HGET', hash, 'token') or '') ~= stale then
              redis.call('DEL', lock)
              return 0
            end
            redis.call('DEL', hash)
            if expires == '' then
              redis.call('HSET', hash, 'token', token, 'iat', issuedAt)
            else
              redis.call('HSET', hash, 'token', token, 'iat', issuedAt, 'exp', expires)
            end
            redis.call('EXPIRE', hash, 3600)
            redis.call('DEL', lock)
            return 1

            """)

    /// A lock and its owner.
    struct UnlockCall {
        let lock: String, owner: String
    }

    /// Releases the lock only if the caller still holds it.
    static let unlockScript = LuaScript<UnlockCall, Never>(
        [.key("lock", \.lock), .argument("owner", \.owner)],
        body: """
            if redis.call('GET', lock) == owner then return redis.call('DEL', lock) end
            return 0

            """)
}

/// No token could be had.
package struct SharedTokenError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
