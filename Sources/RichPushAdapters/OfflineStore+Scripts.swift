import Hiredis

/// The hub's Lua: publish-or-hold, take, expire. Each call's keys share a bucket's slot.
extension OfflineStore {
    /// One publish-or-hold call: now (ms) and its pushes.
    struct PublishCall {
        let now: Int64
        var pushes: [PublishItem]

        init(now: Int64, pushes: [PublishItem] = []) {
            self.now = now
            self.pushes = pushes
        }
    }

    /// One push of a ``PublishCall``: its device's held hash and its bucket's expiry set; the
    /// channel, the envelope, how long to hold it (ms), its field (its collapse id; `\n…` for a
    /// push without one), the device's handle, and the most held of its kind.
    struct PublishItem {
        let held: String, expiry: String, channel: String, envelope: [UInt8], hold: Int64, field: String, handle: String, most: Int

        init(held: String, expiry: String, channel: String, envelope: [UInt8], hold: Int64, field: String, handle: String, most: Int) {
            (self.held, self.expiry, self.channel, self.envelope, self.hold, self.field, self.handle, self.most) = (
                held, expiry, channel, envelope, hold, field, handle, most
            )
        }
    }

    /// Publishes each push and holds the ones no subscriber received; returns each push's
    /// receivers (0: held). Past `most` live pushes of its kind, the one the hub took longest ago
    /// (the envelope's `sentAt`) is expired now. One call per batch on one Redis; on a cluster one
    /// per bucket and batch, whose keys share a slot.
    static let publishOrHold = LuaScript<PublishCall, PublishItem>(
        [.number("now", \.now)], items: \.pushes,
        each: [
            .key("held", \.held), .key("expiry", \.expiry), .argument("channel", \.channel), .argument("envelope", \.envelope),
            .number("hold", \.hold),
            .argument("field", \.field), .argument("handle", \.handle), .number("most", \.most),
        ],
        before: """
            local out = {}

            """,
        eachItem: """
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

            """,
        after: """
            return out

            """)

    /// A device's held hash and its bucket's expiry set, now (ms) and the device's handle.
    struct TakeCall {
        let held: String, expiry: String, now: Int64, handle: String
    }

    /// Takes the device's pushes that have not expired (envelopes); expired ones stay for the
    /// sweeper to report.
    static let takeScript = LuaScript<TakeCall, Never>(
        [
            .key("held", \.held), .key("expiry", \.expiry), .number("now", \.now), .argument("handle", \.handle),
        ],
        body: """
            local fields = redis.call('HGETALL', held)
            local out = {}
            for i = 1, #fields, 2 do
              local at, envelope = string.match(fields[i + 1], '^(%d+)|(.*)$')
              if at and tonumber(at) > now then
                redis.call('HDEL', held, fields[i])
                redis.call('ZREM', expiry, handle .. '\\n' .. fields[i])
                out[#out + 1] = envelope
              end
            end
            return out

            """)

    /// A held push's hash and expiry set, its member there, its field (collapse id) and now (ms).
    struct ExpireCall {
        let held: String, expiry: String, member: String, field: String, now: Int64
    }

    /// Removes a push whose time ran out and returns its envelope; nil when it was taken, or held
    /// again with a later time.
    static let expireScript = LuaScript<ExpireCall, Never>(
        [
            .key("held", \.held), .key("expiry", \.expiry), .argument("member", \.member), .argument("field", \.field),
            .number("now", \.now),
        ],
        body: """
            local score = redis.call('ZSCORE', expiry, member)
            if not score or tonumber(score) > now then return false end
            redis.call('ZREM', expiry, member)
            local value = redis.call('HGET', held, field)
            if not value then return false end
            local at, envelope = string.match(value, '^(%d+)|(.*)$')
            if not at or tonumber(at) > now then return false end
            redis.call('HDEL', held, field)
            return envelope

            """)
}
