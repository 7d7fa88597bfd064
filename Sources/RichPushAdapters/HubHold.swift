package import Hiredis
package import RichPushCore

/// Where the simulated hub holds pushes for offline devices, and the scripts that put, take and
/// expire them.
///
/// Devices are spread over ``buckets`` buckets by the CRC16 of their handle; every key and the
/// channel of a device carry its bucket's hash tag `{hub<b>}`, so each script touches one Redis
/// Cluster slot and the buckets spread over the masters. Per device, a hash
/// `<prefix>:{hub<b>}:held:<handle>`: collapse id → `<expires ms>|<envelope>` (a push without a
/// collapse id under `\n<notification>.<random>`, held beside the others); for every held push, a
/// member `<handle>\n<field>` of its bucket's sorted set `<prefix>:{hub<b>}:held-expiry`, scored by
/// when it expires, which the sweeper reads.
package struct HubHold: Sendable, Hashable {
    package let prefix: String

    /// How many pushes the hub holds for one offline device, as its platform does. Past a limit
    /// the push of that kind the hub took longest ago is dropped (expired now, so the sweeper
    /// reports it): for collapse keys FCM says only that it keeps 4, "with no determining factor
    /// on which keys are kept"; dropping the oldest keeps the newest news. (Past 100 messages
    /// without a collapse key FCM drops them all and tells the app; the hub drops the oldest.)
    package struct Limits: Sendable, Hashable {
        /// Most collapse ids held at once, each with its newest push.
        package var collapseIDs: Int
        /// Most pushes held without a collapse id.
        package var messages: Int

        package init(collapseIDs: Int, messages: Int) {
            self.collapseIDs = collapseIDs
            self.messages = messages
        }

        /// The hub's own, for iOS devices: 100 collapse ids (every APNs push has one).
        package static let standard = Limits(collapseIDs: 100, messages: 100)
        /// FCM's: 4 collapse keys and 100 messages without one per device.
        package static let fcm = Limits(collapseIDs: 4, messages: 100)

        /// The limits of a device on `platform`.
        package static func of(_ platform: Platform) -> Limits {
            platform == .fcm || platform == .gcm ? .fcm : .standard
        }
    }
    /// Enough for the slots of a few masters to share the hub's work evenly.
    package static let buckets = 128

    package init(prefix: String) {
        self.prefix = prefix
    }

    static func bucket(_ handle: String) -> Int { Int(HashSlot.crc16(handle)) % buckets }
    static func tagged(_ prefix: String, _ bucket: Int) -> String { "\(prefix):{hub\(bucket)}" }

    package func key(_ handle: String) -> String { key(handle, bucket: Self.bucket(handle)) }
    /// The held key of `handle`, whose bucket the caller already knows.
    func key(_ handle: String, bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):held:\(handle)" }
    package func expiryKey(_ handle: String) -> String { expiryKey(bucket: Self.bucket(handle)) }
    func expiryKey(bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):held-expiry" }
    /// The channel a device with this push handle listens on (`SSUBSCRIBE`; the hub `SPUBLISH`es).
    package func channel(_ handle: String) -> String { channel(handle, bucket: Self.bucket(handle)) }
    func channel(_ handle: String, bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):device:\(handle)" }
    /// The handle of a device channel.
    package func handle(ofChannel channel: String) -> String? {
        // Searched byte by byte: Foundation's range(of:) was 7 % of the device simulator's CPU.
        let marker = Array("}:device:".utf8)
        let bytes = channel.utf8
        var start = bytes.startIndex
        while let brace = bytes[start...].firstIndex(of: marker[0]) {
            if bytes[brace...].starts(with: marker) {
                return String(Substring(bytes[bytes.index(brace, offsetBy: marker.count)...]))
            }
            start = bytes.index(after: brace)
        }
        return nil
    }

    /// A held push as stored (tests that put one there by hand).
    package static func value(envelope: [UInt8], expiresAt milliseconds: Int64) -> [UInt8] {
        Array("\(milliseconds)|".utf8) + envelope
    }

    /// KEYS: per push its held hash and its bucket's expiry set. ARGV: now ms, then per push:
    /// channel, envelope, hold ms, field (its collapse id; `\n…` for a push without one), handle,
    /// most held of its kind. Publishes each push and holds the ones no subscriber received;
    /// returns each push's receivers (0: held). Past `most` live pushes of its kind, the one the
    /// hub took longest ago (the envelope's `sentAt`) is expired now. One call per batch on one
    /// Redis; on a cluster one per bucket and batch, whose keys share a slot.
    static let publishOrHold = RedisScript("""
        local now = tonumber(ARGV[1])
        local out = {}
        for k = 1, #KEYS, 2 do
          local held, expiry = KEYS[k], KEYS[k + 1]
          local a = 2 + (k - 1) / 2 * 6
          local channel, envelope, hold, field, handle, most = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4], tonumber(ARGV[a + 5])
          local receivers = redis.call('SPUBLISH', channel, envelope)
          out[#out + 1] = receivers
          if receivers == 0 then
            local expires = now + hold
            redis.call('HSET', held, field, expires .. '|' .. envelope)
            redis.call('ZADD', expiry, expires, handle .. '\\n' .. field)
            -- The key outlives its longest push by an hour: the sweeper reports expiries, the
            -- key's own TTL only collects what a stopped sweeper left.
            if redis.call('PTTL', held) < hold + 3600000 then redis.call('PEXPIRE', held, hold + 3600000) end
            if redis.call('HLEN', held) > most then
              -- A field starting with a newline is a push without a collapse id.
              local plain = string.byte(field, 1) == 10
              local fields = redis.call('HGETALL', held)
              local live, oldest, oldestAt = 0, nil, nil
              for i = 1, #fields, 2 do
                local at = tonumber(string.match(fields[i + 1], '^(%d+)|'))
                if (string.byte(fields[i], 1) == 10) == plain and at and at > now then
                  live = live + 1
                  -- The envelope's first "sentAt" member (strings before it are escaped).
                  local sent = tonumber(string.match(fields[i + 1], ',"sentAt":(%d+)')) or 0
                  if fields[i] ~= field and (oldestAt == nil or sent < oldestAt) then oldest, oldestAt = i, sent end
                end
              end
              if live > most and oldest then
                local kept = string.match(fields[oldest + 1], '^%d+|(.*)$')
                redis.call('HSET', held, fields[oldest], now .. '|' .. kept)
                redis.call('ZADD', expiry, now, handle .. '\\n' .. fields[oldest])
              end
            end
          end
        end
        return out
        """)

    /// Most pushes in one `publishOrHold` call.
    package static let pushesPerCall = 500

    /// KEYS: held hash, expiry set. ARGV: now ms, handle. Takes the device's pushes that have not
    /// expired (envelopes); expired ones stay for the sweeper to report.
    static let takeScript = RedisScript("""
        local fields = redis.call('HGETALL', KEYS[1])
        local out = {}
        for i = 1, #fields, 2 do
          local at, envelope = string.match(fields[i + 1], '^(%d+)|(.*)$')
          if at and tonumber(at) > tonumber(ARGV[1]) then
            redis.call('HDEL', KEYS[1], fields[i])
            redis.call('ZREM', KEYS[2], ARGV[2] .. '\\n' .. fields[i])
            out[#out + 1] = envelope
          end
        end
        return out
        """)

    /// Takes every device's held pushes that have not expired, 1,000 devices per pipeline.
    package func take(_ handles: [String], now: Int64, on redis: any RedisClient) async throws -> [(handle: String, envelope: [UInt8])] {
        var held: [(handle: String, envelope: [UInt8])] = []
        for start in stride(from: 0, to: handles.count, by: 1000) {
            let chunk = Array(handles[start..<min(start + 1000, handles.count)])
            let replies = try await redis.run(Self.takeScript, calls: chunk.map { (keys: [key($0), expiryKey($0)], arguments: [now, $0]) })
            for (handle, reply) in zip(chunk, replies) {
                try reply.throwingError()
                for envelope in reply.array ?? [] { if let bytes = envelope.bytes { held.append((handle, bytes)) } }
            }
        }
        return held
    }

    /// KEYS: held hash, expiry set. ARGV: member, collapse id, now ms. Removes a push whose time
    /// ran out and returns its envelope; nil when it was taken, or held again with a later time.
    static let expireScript = RedisScript("""
        local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
        if not score or tonumber(score) > tonumber(ARGV[3]) then return false end
        redis.call('ZREM', KEYS[2], ARGV[1])
        local value = redis.call('HGET', KEYS[1], ARGV[2])
        if not value then return false end
        local at, envelope = string.match(value, '^(%d+)|(.*)$')
        if not at or tonumber(at) > tonumber(ARGV[3]) then return false end
        redis.call('HDEL', KEYS[1], ARGV[2])
        return envelope
        """)

    /// Removes up to `limit` pushes whose time ran out (looked for in every bucket, in one
    /// round trip); returns their envelopes.
    package func expire(now: Int64, limit: Int, on redis: any RedisClient) async throws -> [[UInt8]] {
        let replies = try await redis.sendAll((0..<Self.buckets).map { RedisCommand("ZRANGEBYSCORE", expiryKey(bucket: $0), "-inf", now, "LIMIT", 0, limit) })
        var calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])] = []
        var strays: [RedisCommand] = []
        for (bucket, reply) in replies.enumerated() {
            for member in (reply.array ?? []).compactMap(\.string) {
                guard calls.count < limit else { break }
                guard let split = member.firstIndex(of: "\n") else {
                    // Not one of ours: drop it, or it would be read again on every sweep.
                    strays.append(RedisCommand("ZREM", expiryKey(bucket: bucket), member))
                    continue
                }
                let handle = String(member[..<split]), collapse = String(member[member.index(after: split)...])
                calls.append((keys: [key(handle), expiryKey(bucket: bucket)], arguments: [member, collapse, now]))
            }
        }
        if !strays.isEmpty { try await redis.sendAll(strays) }
        guard !calls.isEmpty else { return [] }
        let expired = try await redis.run(Self.expireScript, calls: calls)
        return try expired.compactMap { reply in try reply.throwingError().bytes }
    }
}
