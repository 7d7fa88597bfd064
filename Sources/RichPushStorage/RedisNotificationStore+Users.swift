public import RichPushCore
import Hiredis
import RichPushQueue

extension RedisNotificationStore {
    public func chargeQuota(user: String, bytes: Int, perMinute: Int, liveBytes: Int) async throws -> QuotaRefusal? {
        guard perMinute > 0 || liveBytes > 0 else { return nil }
        let now = JobQueue.nowMilliseconds()
        let retentionMs = Int(retention.components.seconds) * 1000
        let reply = try await redis.run(Self.quotaScript, keys: [keys.quotaRate(user), keys.quotaBytes(user), keys.quotaBytesLedger(user)],
                                        arguments: [now, perMinute, liveBytes, bytes, now + Int64(retentionMs), retentionMs, "\(now):\(bytes):\(UInt32.random(in: 0...UInt32.max))"])
        guard let parts = reply.array, parts.count == 2, let code = parts[0].int, let wait = parts[1].int else {
            throw RedisError.unexpected(reply, expected: "{code, seconds}")
        }
        switch code {
        case 0: return nil
        case 1: return QuotaRefusal(message: "\(user) may create \(perMinute) notifications per minute", retryAfter: max(1, wait))
        default: return QuotaRefusal(message: "\(user)'s live payloads would exceed \(liveBytes) bytes (kept for the retention)", retryAfter: max(1, wait))
        }
    }

    /// KEYS: minute counter, live bytes total, (expiry → "ms:bytes:nonce") sorted set.
    /// ARGV: now ms, per-minute limit, live-bytes limit, bytes, expiry ms, retention ms, member.
    /// Expired payloads leave the total first (at most 1,000 a call, so the call stays short).
    static let quotaScript = RedisScript("""
    local now = tonumber(ARGV[1])
    local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1000)
    local freed = 0
    for _, member in ipairs(expired) do
      freed = freed + tonumber(string.match(member, '^%d+:(%d+):'))
    end
    if #expired > 0 then
      redis.call('ZREM', KEYS[3], unpack(expired))
      redis.call('DECRBY', KEYS[2], freed)
    end
    local perMinute = tonumber(ARGV[2])
    if perMinute > 0 then
      local count = tonumber(redis.call('GET', KEYS[1]) or '0')
      if count >= perMinute then
        local ttl = redis.call('PTTL', KEYS[1])
        return {1, math.ceil(math.max(ttl, 1000) / 1000)}
      end
    end
    local limit = tonumber(ARGV[3])
    local size = tonumber(ARGV[4])
    local total = tonumber(redis.call('GET', KEYS[2]) or '0')
    if limit > 0 and total + size > limit then
      local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
      local wait = 60
      if first[2] then wait = math.ceil((tonumber(first[2]) - now) / 1000) end
      return {2, math.max(wait, 1)}
    end
    if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
    redis.call('INCRBY', KEYS[2], size)
    redis.call('ZADD', KEYS[3], ARGV[5], ARGV[7])
    redis.call('PEXPIRE', KEYS[2], ARGV[6])
    redis.call('PEXPIRE', KEYS[3], ARGV[6])
    return {0, 0}
    """)

    public func forgetNotifications(createdBy user: String) async throws -> Int {
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
