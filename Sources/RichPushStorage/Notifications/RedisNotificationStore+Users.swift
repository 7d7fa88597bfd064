import Hiredis
package import RichPushCore
import RichPushQueue

extension RedisNotificationStore {
    package func chargeQuota(user: String, bytes: Int, limits: QuotaLimits) async throws -> QuotaRefusal? {
        guard !limits.isUnlimited else { return nil }
        return try await charge(limits, user: user, bytes: bytes)
    }

    /// All of them in one pipeline of script calls, each evaluated in order.
    package func chargeQuotas(user: String, bytes: [Int], limits: QuotaLimits) async throws -> [QuotaRefusal?] {
        guard !limits.isUnlimited, !bytes.isEmpty else { return bytes.map { _ in nil } }
        let replies = try await redis.run(Self.quotaScript, calls: bytes.map { quotaCharge(user: user, bytes: $0, limits: limits) })
        return try replies.map { try Self.refusal(try $0.throwingError(), user: user, limits: limits) }
    }

    /// The quota's own call: on a cluster, where its keys cannot join the create's script.
    func charge(_ limits: QuotaLimits, user: String, bytes: Int) async throws -> QuotaRefusal? {
        let reply = try await redis.run(Self.quotaScript, quotaCharge(user: user, bytes: bytes, limits: limits))
        return try Self.refusal(reply, user: user, limits: limits)
    }

    /// One charge to `user`'s quotas of a notification of `bytes` (see ``quotaFunction``).
    func quotaCharge(user: String, bytes: Int, limits: QuotaLimits) -> QuotaCharge {
        let now = JobQueue.nowMilliseconds()
        let retentionMs = Int(retention.components.seconds) * 1000
        return QuotaCharge(
            bucket: keys.quotaBucket(user), bytes: keys.quotaBytes(user), ledger: keys.quotaBytesLedger(user), now: now,
            perMinute: limits.perMinute, burst: limits.burst,
            liveBytes: limits.liveBytes, size: bytes, expiry: now + Int64(retentionMs), retention: retentionMs,
            member: "\(now):\(bytes):\(UInt32.random(in: 0...UInt32.max))")
    }

    /// nil for `{0, 0}` (charged); the refusal for `{1, s}` or `{2, s}`.
    static func refusal(_ reply: RedisValue, user: String, limits: QuotaLimits) throws -> QuotaRefusal? {
        guard let parts = reply.array, parts.count == 2, let code = parts[0].int, let wait = parts[1].int else {
            throw RedisError.unexpected(reply, expected: "{code, seconds}")
        }
        switch code {
        case 0: return nil
        case 1:
            return QuotaRefusal(
                message: "\(user) may create \(limits.perMinute) notifications per minute, at most \(limits.burst) at once",
                retryAfter: max(1, wait), limit: .perMinute)
        default:
            return QuotaRefusal(
                message: "\(user)'s live payloads would exceed \(limits.liveBytes) bytes (kept for the retention)",
                retryAfter: max(1, wait),
                limit: .liveBytes)
        }
    }

    /// One charge to a user's quotas: their token bucket (a hash: `tokens`, `at`), live bytes
    /// total and (expiry → "ms:bytes:nonce") sorted set; now, the limits (0: none), the
    /// notification's bytes, when they expire, the retention (ms) and the sorted set's member.
    struct QuotaCharge {
        let bucket: String, bytes: String, ledger: String
        let now: Int64, perMinute: Int, burst: Int, liveBytes: Int, size: Int, expiry: Int64, retention: Int, member: String
    }

    /// The quota's slots, in its own script and in the create's.
    static let quotaSlots: [LuaSlot<QuotaCharge>] = [
        .key("quotaBucket", \.bucket), .key("quotaBytes", \.bytes), .key("quotaLedger", \.ledger),
        .number("quotaNow", \.now), .number("quotaPerMinute", \.perMinute), .number("quotaBurst", \.burst),
        .number("quotaLiveBytes", \.liveBytes),
        .number("quotaSize", \.size),
        .argument("quotaExpiry", \.expiry), .argument("quotaRetention", \.retention), .argument("quotaMember", \.member),
    ]

    /// `{0, 0}` charged, or ``quotaFunction``'s refusal.
    static let quotaScript = LuaScript<QuotaCharge, Never>(
        quotaSlots, using: [quotaFunction],
        body: """
            return charge(quotaBucket, quotaBytes, quotaLedger, quotaNow, quotaPerMinute, quotaBurst, quotaLiveBytes, quotaSize, quotaExpiry, quotaRetention, quotaMember) or {0, 0}

            """)

    /// Lua: `charge(bucket, bytes, ledger, now, perMinute, burst, liveBytes, size, expiry,
    /// retention, member)` charges one notification to a user's quotas (``QuotaCharge``) and
    /// returns nil, or `{1, seconds}` (the bucket has no whole token: the wait until it has) or
    /// `{2, seconds}` (the live bytes would pass the limit) and charges nothing. The bucket holds
    /// `burst` tokens at most and gains `perMinute` a minute; it expires once it would be full.
    /// Expired payloads leave the total first (at most 1,000 a call, so the call stays short).
    static let quotaFunction = """
        local function charge(bucket, bytes, ledger, now, perMinute, burst, limit, size, expiry, retention, member)
          local expired = redis.call('ZRANGEBYSCORE', ledger, '-inf', now, 'LIMIT', 0, 1000)
          local freed = 0
          for _, old in ipairs(expired) do
            freed = freed + tonumber(string.match(old, '^%d+:(%d+):'))
          end
          if #expired > 0 then
            redis.call('ZREM', ledger, unpack(expired))
            redis.call('DECRBY', bytes, freed)
          end
          local tokens = 0
          if perMinute > 0 then
            local state = redis.call('HMGET', bucket, 'tokens', 'at')
            tokens = tonumber(state[1]) or burst
            local at = tonumber(state[2]) or now
            if now > at then tokens = math.min(burst, tokens + (now - at) * perMinute / 60000) end
            if tokens < 1 then
              return {1, math.max(1, math.ceil((1 - tokens) * 60 / perMinute))}
            end
          end
          local total = tonumber(redis.call('GET', bytes) or '0')
          if limit > 0 and total + size > limit then
            local first = redis.call('ZRANGE', ledger, 0, 0, 'WITHSCORES')
            local wait = 60
            if first[2] then wait = math.ceil((tonumber(first[2]) - now) / 1000) end
            return {2, math.max(wait, 1)}
          end
          if perMinute > 0 then
            redis.call('HSET', bucket, 'tokens', tostring(tokens - 1), 'at', now)
            redis.call('PEXPIRE', bucket, math.ceil(burst * 60000 / perMinute) + 1000)
          end
          redis.call('INCRBY', bytes, size)
          redis.call('ZADD', ledger, expiry, member)
          redis.call('PEXPIRE', bytes, retention)
          redis.call('PEXPIRE', ledger, retention)
          return nil
        end

        """

    package func forgetNotifications(createdBy user: String) async throws -> Int {
        var forgotten = 0
        for partition in 0..<keys.partitions {
            let keys = self.keys.inPartition(partition)
            let index = keys.created(by: user)
            while true {
                let ids = (try await redis.send("ZRANGE", index, 0, 499).array ?? []).compactMap(\.int)
                guard !ids.isEmpty else { break }
                var commands: [RedisCommand] = []
                for id in ids {
                    commands.append(
                        RedisCommand("DEL", keys.notification(id), keys.devices(id), keys.fetchedBy(id), keys.receipts(id), keys.ledger(id))
                    )
                }
                var remove = RedisCommand("ZREM", index)
                for id in ids { remove.append(id) }
                commands.append(remove)
                try await redis.sendAll(commands)
                forgotten += ids.count
            }
            try await redis.send("DEL", index)
        }
        try await redis.send(RedisCommand("DEL", keys.quotaBucket(user), keys.quotaBytes(user), keys.quotaBytesLedger(user)))
        return forgotten
    }
}
