package import Hiredis
package import RichPushCore

/// The fleet's device holds and claims, in one hash slot so that one script checks and writes
/// both: the holds in a sorted set, `<prefix>:device-backoff`, each device scored by when its hold
/// ends; the claims in another, scored by when each lapses, with their owners in a hash. One
/// script call per round to claim, one to release and hold; each trims what has ended.
package struct RedisDeviceBackOffs: DeviceBackOffs {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func claim(_ devices: [String], owner: String, now: Int64, until: Int64) async throws -> [String: DeviceClaimRefusal] {
        let devices = Array(Set(devices))
        guard !devices.isEmpty else { return [:] }
        let reply = try await redis.run(
            Self.claimScript,
            ClaimCall(
                holds: keys.deviceBackOffs, claims: keys.deviceClaims, owners: keys.deviceClaimOwners,
                owner: owner, now: now, until: until, devices: devices))
        let codes = try reply.throwingError().array ?? []
        guard codes.count == devices.count else { throw RedisError.unexpected(reply, expected: "\(devices.count) claim codes") }
        var refused: [String: DeviceClaimRefusal] = [:]
        for (device, code) in zip(devices, codes) {
            let value = Int64(code.int ?? 0)
            if value > 0 { refused[device] = .held(until: value) } else if value < 0 { refused[device] = .inFlight(until: -value) }
        }
        return refused
    }

    package func release(_ devices: [String], owner: String, holding: [String: Int64], now: Int64) async throws {
        guard !devices.isEmpty || !holding.isEmpty else { return }
        var holds: [any RedisArgument] = []
        for (device, end) in holding.sorted(by: { $0.key < $1.key }) { holds += [end, device] }
        _ = try await redis.run(
            Self.releaseScript,
            ReleaseCall(
                holds: keys.deviceBackOffs, claims: keys.deviceClaims, owners: keys.deviceClaimOwners,
                owner: owner, now: now, devices: Array(Set(devices)), holding: holds)
        ).throwingError()
    }

    /// A claim: the three keys, who claims, the time and when the claims lapse, the devices.
    struct ClaimCall {
        let holds: String, claims: String, owners: String
        let owner: String, now: Int64, until: Int64
        let devices: [String]
    }

    /// Per device, in order: 0 claimed, n > 0 held until n, -n claimed by another owner until n.
    /// Claims that lapsed (their rounds crashed) are trimmed first, at most 1,000 a call.
    static let claimScript = LuaScript<ClaimCall, Never>(
        [
            .key("holds", \.holds), .key("claims", \.claims), .key("owners", \.owners),
            .argument("owner", \.owner), .number("now", \.now), .argument("untilTime", \.until), .list("devices", { $0.devices }),
        ],
        body: """
            local lapsed = redis.call('ZRANGEBYSCORE', claims, '-inf', now, 'LIMIT', 0, 1000)
            if #lapsed > 0 then
              redis.call('ZREM', claims, unpack(lapsed))
              redis.call('HDEL', owners, unpack(lapsed))
            end
            local out, taken, takers = {}, {}, {}
            for j = devicesFrom, devicesTo, 2000 do
              local last = math.min(j + 1999, devicesTo)
              local held = redis.call('ZMSCORE', holds, unpack(ARGV, j, last))
              local busy = redis.call('ZMSCORE', claims, unpack(ARGV, j, last))
              local by = redis.call('HMGET', owners, unpack(ARGV, j, last))
              for i = j, last do
                local k, device = i - j + 1, ARGV[i]
                local heldUntil = held[k] and tonumber(held[k]) or 0
                local busyUntil = busy[k] and tonumber(busy[k]) or 0
                if heldUntil > now then
                  out[#out + 1] = heldUntil
                elseif busyUntil > now and by[k] ~= owner then
                  out[#out + 1] = -busyUntil
                else
                  out[#out + 1] = 0
                  taken[#taken + 1] = untilTime
                  taken[#taken + 1] = device
                  takers[#takers + 1] = device
                  takers[#takers + 1] = owner
                end
              end
            end
            for j = 1, #taken, 2000 do
              redis.call('ZADD', claims, unpack(taken, j, math.min(j + 1999, #taken)))
              redis.call('HSET', owners, unpack(takers, j, math.min(j + 1999, #takers)))
            end
            return out

            """)

    /// A release: the three keys, whose claims, the time, the devices to release, and the holds
    /// to write as (end, device) pairs.
    struct ReleaseCall {
        let holds: String, claims: String, owners: String
        let owner: String, now: Int64
        let devices: [String]
        let holding: [any RedisArgument]
    }

    /// Releases the owner's claims among the devices (not another's that took over a lapsed
    /// one), writes the holds (the later end wins) and trims the ended ones.
    static let releaseScript = LuaScript<ReleaseCall, Never>(
        [
            .key("holds", \.holds), .key("claims", \.claims), .key("owners", \.owners),
            .argument("owner", \.owner), .number("now", \.now), .list("devices", { $0.devices }), .list("holding", \.holding),
        ],
        body: """
            for j = devicesFrom, devicesTo, 2000 do
              local last = math.min(j + 1999, devicesTo)
              local by = redis.call('HMGET', owners, unpack(ARGV, j, last))
              local mine = {}
              for i = j, last do
                if by[i - j + 1] == owner then mine[#mine + 1] = ARGV[i] end
              end
              if #mine > 0 then
                redis.call('ZREM', claims, unpack(mine))
                redis.call('HDEL', owners, unpack(mine))
              end
            end
            for j = holdingFrom, holdingTo, 2000 do
              redis.call('ZADD', holds, 'GT', unpack(ARGV, j, math.min(j + 1999, holdingTo)))
            end
            if holdingTo >= holdingFrom then redis.call('ZREMRANGEBYSCORE', holds, '-inf', '(' .. now) end
            return 1

            """)
}
