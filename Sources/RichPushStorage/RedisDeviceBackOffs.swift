package import Hiredis
package import RichPushCore

/// The fleet's device holds and claims, in one hash slot so that one script checks and writes
/// both: the holds in a sorted set, `<prefix>:device-backoff`, each device scored by when its hold
/// ends; the claims in a hash, each device's value `<until ms>:<owner>`. One script call per round
/// to claim, one to release and hold (their cost per device: docs/cost-model.md).
/// A claim whose round never released it lapses at its time; each claim call looks at 16 claims
/// at random and deletes the lapsed ones, so those of crashed rounds do not stay.
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
            ClaimCall(holds: keys.deviceBackOffs, claims: keys.deviceClaims, owner: owner, now: now, until: until, devices: devices))
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
                holds: keys.deviceBackOffs, claims: keys.deviceClaims, owner: owner, now: now, devices: Array(Set(devices)), holding: holds)
        ).throwingError()
    }

    /// A claim: the two keys, who claims, the time and when the claims lapse, the devices.
    struct ClaimCall {
        let holds: String, claims: String
        let owner: String, now: Int64, until: Int64
        let devices: [String]
    }

    /// Per device, in order: 0 claimed, n > 0 held until n, -n claimed by another owner until n.
    static let claimScript = LuaScript<ClaimCall, Never>(
        [
            .key("holds", \.holds), .key("claims", \.claims), .argument("owner", \.owner), .number("now", \.now),
            .argument("untilTime", \.until), .list("devices", { $0.devices }),
        ],
        body: """
            local function lapse(claim)
              local colon = string.find(claim, ':', 1, true)
              return tonumber(string.sub(claim, 1, colon - 1)), string.sub(claim, colon + 1)
            end
            local sample = redis.call('HRANDFIELD', claims, 16, 'WITHVALUES')
            local lapsed = {}
            for k = 1, #sample, 2 do
              if lapse(sample[k + 1]) <= now then lapsed[#lapsed + 1] = sample[k] end
            end
            if #lapsed > 0 then redis.call('HDEL', claims, unpack(lapsed)) end
            local mine = untilTime .. ':' .. owner
            local out, taken = {}, {}
            for j = devicesFrom, devicesTo, 2000 do
              local last = math.min(j + 1999, devicesTo)
              local held = redis.call('ZMSCORE', holds, unpack(ARGV, j, last))
              local current = redis.call('HMGET', claims, unpack(ARGV, j, last))
              for i = j, last do
                local k = i - j + 1
                local heldUntil = held[k] and tonumber(held[k]) or 0
                local busyUntil = 0
                if current[k] then
                  local other, by = lapse(current[k])
                  if other > now and by ~= owner then busyUntil = other end
                end
                if heldUntil > now then
                  out[#out + 1] = heldUntil
                elseif busyUntil > 0 then
                  out[#out + 1] = -busyUntil
                else
                  out[#out + 1] = 0
                  taken[#taken + 1] = ARGV[i]
                  taken[#taken + 1] = mine
                end
              end
            end
            for j = 1, #taken, 2000 do
              redis.call('HSET', claims, unpack(taken, j, math.min(j + 1999, #taken)))
            end
            return out

            """)

    /// A release: the two keys, whose claims, the time, the devices to release, and the holds to
    /// write as (end, device) pairs.
    struct ReleaseCall {
        let holds: String, claims: String
        let owner: String, now: Int64
        let devices: [String]
        let holding: [any RedisArgument]
    }

    /// Releases the owner's claims among the devices (not another's that took over a lapsed
    /// one), writes the holds (the later end wins) and trims the ended ones.
    static let releaseScript = LuaScript<ReleaseCall, Never>(
        [
            .key("holds", \.holds), .key("claims", \.claims), .argument("owner", \.owner), .number("now", \.now),
            .list("devices", { $0.devices }), .list("holding", \.holding),
        ],
        body: """
            for j = devicesFrom, devicesTo, 2000 do
              local last = math.min(j + 1999, devicesTo)
              local current = redis.call('HMGET', claims, unpack(ARGV, j, last))
              local mine = {}
              for i = j, last do
                local claim = current[i - j + 1]
                if claim and string.sub(claim, string.find(claim, ':', 1, true) + 1) == owner then mine[#mine + 1] = ARGV[i] end
              end
              if #mine > 0 then redis.call('HDEL', claims, unpack(mine)) end
            end
            for j = holdingFrom, holdingTo, 2000 do
              redis.call('ZADD', holds, 'GT', unpack(ARGV, j, math.min(j + 1999, holdingTo)))
            end
            if holdingTo >= holdingFrom then redis.call('ZREMRANGEBYSCORE', holds, '-inf', '(' .. now) end
            return 1

            """)
}
