import Hiredis
package import RichPushCore
import RichPushQueue

extension RedisUserStore {
    package func reserveLoginAttempt(user: String, address: String, policy: LoginThrottle) async throws -> Int? {
        let call = ReserveCall(
            pair: keys.loginPair(user, address), address: keys.loginAddress(address), index: keys.loginPairs(user),
            now: JobQueue.nowMilliseconds(),
            freePerPair: policy.freeFailuresPerPair, freePerAddress: policy.freeFailuresPerAddress, maxDelay: policy.maxDelay.milliseconds,
            memory: policy.memory.milliseconds, firstDelay: policy.firstDelay.milliseconds, member: address)
        let wait = try await redis.run(Self.reserveScript, call).int ?? 0
        return wait > 0 ? wait : nil
    }

    package func loginSucceeded(user: String, address: String) async throws {
        try await redis.run(
            Self.successScript,
            SuccessCall(
                pair: keys.loginPair(user, address), address: keys.loginAddress(address), index: keys.loginPairs(user),
                member: address))
    }

    package func unlock(user: String, address: String?) async throws -> Int {
        if let address {
            let replies = try await redis.sendAll([
                RedisCommand("DEL", keys.loginPair(user, address)), RedisCommand("SREM", keys.loginPairs(user), address),
            ])
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

    /// A login attempt's counters: the (user, address) pair's, the address's, the user's index
    /// of addresses; now (ms), the free failures per pair and per address, the delays (ms) and
    /// the address (the index's member).
    struct ReserveCall {
        let pair: String, address: String, index: String
        let now: Int64, freePerPair: Int, freePerAddress: Int, maxDelay: Int, memory: Int, firstDelay: Int, member: String
    }

    /// Refuses (returns the seconds to wait) while either counter is in its delay, else charges
    /// both with one failure in advance: concurrent guesses see each other's charge.
    static let reserveScript = LuaScript<ReserveCall, Never>(
        [
            .key("pair", \.pair), .key("address", \.address), .key("index", \.index), .number("now", \.now),
            .number("freePerPair", \.freePerPair),
            .number("freePerAddress", \.freePerAddress), .number("maxDelay", \.maxDelay), .argument("memory", \.memory),
            .number("firstDelay", \.firstDelay),
            .argument("member", \.member),
        ],
        body: """
            local function wait(key, free)
              local v = redis.call('HMGET', key, 'n', 'last')
              local n = tonumber(v[1] or '0')
              local last = tonumber(v[2] or '0')
              if n < free then return 0 end
              local delay = math.min(maxDelay, firstDelay * 2 ^ math.min(n - free, 40))
              local left = last + delay - now
              if left > 0 then return math.ceil(left / 1000) end
              return 0
            end
            local w = math.max(wait(pair, freePerPair), wait(address, freePerAddress))
            if w > 0 then return w end
            local function charge(key)
              redis.call('HINCRBY', key, 'n', 1)
              redis.call('HSET', key, 'last', now)
              redis.call('PEXPIRE', key, memory)
            end
            charge(pair)
            charge(address)
            redis.call('SADD', index, member)
            redis.call('PEXPIRE', index, memory)
            return 0

            """)

    /// A successful login's counters (as ``ReserveCall``) and address.
    struct SuccessCall {
        let pair: String, address: String, index: String, member: String
    }

    /// Clears the pair, refunds the address's advance charge.
    static let successScript = LuaScript<SuccessCall, Never>(
        [
            .key("pair", \.pair), .key("address", \.address), .key("index", \.index), .argument("member", \.member),
        ],
        body: """
            redis.call('DEL', pair)
            redis.call('SREM', index, member)
            local n = tonumber(redis.call('HGET', address, 'n') or '0')
            if n > 1 then redis.call('HINCRBY', address, 'n', -1) elseif n == 1 then redis.call('DEL', address) end
            return 1

            """)
}
