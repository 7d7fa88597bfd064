package import RichPushCore
import Hiredis
import RichPushQueue

extension RedisNotificationStore {
    package func chargeQuota(user: String, bytes: Int, perMinute: Int, liveBytes: Int) async throws -> QuotaRefusal? {
        let limits = QuotaLimits(perMinute: perMinute, liveBytes: liveBytes)
        guard !limits.isUnlimited else { return nil }
        return try await charge(limits, user: user, bytes: bytes)
    }

    /// All of them in one pipeline of script calls, each evaluated in order.
    package func chargeQuotas(user: String, bytes: [Int], perMinute: Int, liveBytes: Int) async throws -> [QuotaRefusal?] {
        let limits = QuotaLimits(perMinute: perMinute, liveBytes: liveBytes)
        guard !limits.isUnlimited, !bytes.isEmpty else { return bytes.map { _ in nil } }
        let replies = try await redis.run(Self.quotaScript, calls: bytes.map { (quotaKeys(user: user), quotaArguments(bytes: $0, limits: limits)) })
        return try replies.map { try Self.refusal(try $0.throwingError(), user: user, limits: limits) }
    }

    /// The quota's own call: on a cluster, where its keys cannot join the create's script.
    func charge(_ limits: QuotaLimits, user: String, bytes: Int) async throws -> QuotaRefusal? {
        let reply = try await redis.run(Self.quotaScript, keys: quotaKeys(user: user), arguments: quotaArguments(bytes: bytes, limits: limits))
        return try Self.refusal(reply, user: user, limits: limits)
    }

    func quotaKeys(user: String) -> [any RedisArgument] {
        [keys.quotaRate(user), keys.quotaBytes(user), keys.quotaBytesLedger(user)]
    }

    /// The quota function's arguments (see ``quotaFunction``).
    func quotaArguments(bytes: Int, limits: QuotaLimits) -> [any RedisArgument] {
        let now = JobQueue.nowMilliseconds()
        let retentionMs = Int(retention.components.seconds) * 1000
        return [now, limits.perMinute, limits.liveBytes, bytes, now + Int64(retentionMs), retentionMs, "\(now):\(bytes):\(UInt32.random(in: 0...UInt32.max))"]
    }

    /// nil for `{0, 0}` (charged); the refusal for `{1, s}` or `{2, s}`.
    static func refusal(_ reply: RedisValue, user: String, limits: QuotaLimits) throws -> QuotaRefusal? {
        guard let parts = reply.array, parts.count == 2, let code = parts[0].int, let wait = parts[1].int else {
            throw RedisError.unexpected(reply, expected: "{code, seconds}")
        }
        switch code {
        case 0: return nil
        case 1: return QuotaRefusal(message: "\(user) may create \(limits.perMinute) notifications per minute", retryAfter: max(1, wait), limit: .perMinute)
        default: return QuotaRefusal(message: "\(user)'s live payloads would exceed \(limits.liveBytes) bytes (kept for the retention)", retryAfter: max(1, wait),
                                     limit: .liveBytes)
        }
    }

    /// KEYS: minute counter, live bytes total, (expiry → "ms:bytes:nonce") sorted set.
    /// ARGV: now ms, per-minute limit, live-bytes limit, bytes, expiry ms, retention ms, member.
    static let quotaScript = RedisScript(quotaFunction + """
    return charge(KEYS[1], KEYS[2], KEYS[3], ARGV, 1) or {0, 0}
    """)

    /// Lua: `charge(rate, bytes, ledger, args, a)` charges one notification to a user's quotas
    /// and returns nil, or `{1, seconds}` (the minute's count is spent) or `{2, seconds}` (the
    /// live bytes would pass the limit) and charges nothing. From `args[a]` on: now ms, per-minute
    /// limit, live-bytes limit, bytes, expiry ms, retention ms, member. Expired payloads leave
    /// the total first (at most 1,000 a call, so the call stays short).
    static let quotaFunction = """
    local function charge(rate, bytes, ledger, args, a)
      local now = tonumber(args[a])
      local expired = redis.call('ZRANGEBYSCORE', ledger, '-inf', now, 'LIMIT', 0, 1000)
      local freed = 0
      for _, member in ipairs(expired) do
        freed = freed + tonumber(string.match(member, '^%d+:(%d+):'))
      end
      if #expired > 0 then
        redis.call('ZREM', ledger, unpack(expired))
        redis.call('DECRBY', bytes, freed)
      end
      local perMinute = tonumber(args[a + 1])
      if perMinute > 0 then
        local count = tonumber(redis.call('GET', rate) or '0')
        if count >= perMinute then
          local ttl = redis.call('PTTL', rate)
          return {1, math.ceil(math.max(ttl, 1000) / 1000)}
        end
      end
      local limit = tonumber(args[a + 2])
      local size = tonumber(args[a + 3])
      local total = tonumber(redis.call('GET', bytes) or '0')
      if limit > 0 and total + size > limit then
        local first = redis.call('ZRANGE', ledger, 0, 0, 'WITHSCORES')
        local wait = 60
        if first[2] then wait = math.ceil((tonumber(first[2]) - now) / 1000) end
        return {2, math.max(wait, 1)}
      end
      if redis.call('INCR', rate) == 1 then redis.call('PEXPIRE', rate, 60000) end
      redis.call('INCRBY', bytes, size)
      redis.call('ZADD', ledger, args[a + 4], args[a + 6])
      redis.call('PEXPIRE', bytes, args[a + 5])
      redis.call('PEXPIRE', ledger, args[a + 5])
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
                    commands.append(RedisCommand("DEL", keys.notification(id), keys.status(id), keys.devices(id), keys.fetchedBy(id), keys.receipts(id), keys.ledger(id)))
                }
                var remove = RedisCommand("ZREM", index)
                for id in ids { remove.append(id) }
                commands.append(remove)
                try await redis.sendAll(commands)
                forgotten += ids.count
            }
            try await redis.send("DEL", index)
        }
        try await redis.send(RedisCommand("DEL", keys.quotaRate(user), keys.quotaBytes(user), keys.quotaBytesLedger(user)))
        return forgotten
    }
}
