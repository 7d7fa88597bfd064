import Hiredis
package import RichPushCore
import RichPushQueue

extension RedisUserStore {
    package func reserveLoginAttempt(user: String, address: String, policy: LoginThrottle) async throws -> Int? {
        let wait = try await redis.run(Self.reserveScript, keys: [keys.loginPair(user, address), keys.loginAddress(address), keys.loginPairs(user)],
                                       arguments: [JobQueue.nowMilliseconds(), policy.freeFailuresPerPair, policy.freeFailuresPerAddress,
                                                   policy.maxDelay.milliseconds, policy.memory.milliseconds, policy.firstDelay.milliseconds, address]).int ?? 0
        return wait > 0 ? wait : nil
    }

    package func loginSucceeded(user: String, address: String) async throws {
        try await redis.run(Self.successScript, keys: [keys.loginPair(user, address), keys.loginAddress(address), keys.loginPairs(user)], arguments: [address])
    }

    package func unlock(user: String, address: String?) async throws -> Int {
        if let address {
            let replies = try await redis.sendAll([RedisCommand("DEL", keys.loginPair(user, address)), RedisCommand("SREM", keys.loginPairs(user), address)])
            return replies[0].int ?? 0
        }
        // The user's index of addresses (every key in the registry's slot, so this works on a
        // cluster as on one Redis)...
        var removed = 0
        let addresses = (try await redis.send("SMEMBERS", keys.loginPairs(user)).array ?? []).compactMap(\.string)
        if !addresses.isEmpty {
            var delete = RedisCommand("DEL")
            var forget = RedisCommand("SREM", keys.loginPairs(user))
            for address in addresses {
                delete.append(keys.loginPair(user, address))
                forget.append(address)
            }
            removed += try await redis.sendAll([delete, forget])[0].int ?? 0
        }
        return removed
    }


    /// KEYS: pair, address, the user's address index. ARGV: now ms, free failures per pair, per
    /// address, max delay ms, memory ms, first delay ms, the address.
    /// Refuses (returns the seconds to wait) while either counter is in its delay, else charges both
    /// with one failure in advance: concurrent guesses see each other's charge.
    static let reserveScript = RedisScript("""
    local now = tonumber(ARGV[1])
    local maxDelay = tonumber(ARGV[4])
    local function wait(key, free)
      local v = redis.call('HMGET', key, 'n', 'last')
      local n = tonumber(v[1] or '0')
      local last = tonumber(v[2] or '0')
      if n < free then return 0 end
      local delay = math.min(maxDelay, tonumber(ARGV[6]) * 2 ^ math.min(n - free, 40))
      local left = last + delay - now
      if left > 0 then return math.ceil(left / 1000) end
      return 0
    end
    local w = math.max(wait(KEYS[1], tonumber(ARGV[2])), wait(KEYS[2], tonumber(ARGV[3])))
    if w > 0 then return w end
    for i = 1, 2 do
      redis.call('HINCRBY', KEYS[i], 'n', 1)
      redis.call('HSET', KEYS[i], 'last', now)
      redis.call('PEXPIRE', KEYS[i], ARGV[5])
    end
    redis.call('SADD', KEYS[3], ARGV[7])
    redis.call('PEXPIRE', KEYS[3], ARGV[5])
    return 0
    """)

    /// KEYS: pair, address, the user's address index. ARGV: the address. Clears the pair, refunds
    /// the address's advance charge.
    static let successScript = RedisScript("""
    redis.call('DEL', KEYS[1])
    redis.call('SREM', KEYS[3], ARGV[1])
    local n = tonumber(redis.call('HGET', KEYS[2], 'n') or '0')
    if n > 1 then redis.call('HINCRBY', KEYS[2], 'n', -1) elseif n == 1 then redis.call('DEL', KEYS[2]) end
    return 1
    """)
}
