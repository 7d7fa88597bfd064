package import Hiredis
import RichPushCore

/// The fleet's device back-offs in one sorted set, `<prefix>:device-backoff`, each device scored
/// by when its hold ends: one `ZMSCORE` per batch to check, one `ZADD GT` (the later end wins)
/// and the trimming of ended holds in one pipeline to write.
package struct RedisDeviceBackOffs: DeviceBackOffs {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func held(among devices: [String], now: Int64) async throws -> [String: Int64] {
        guard !devices.isEmpty else { return [:] }
        let scores = try await redis.send(RedisCommand("ZMSCORE", arguments: [keys.deviceBackOffs] + devices)).throwingError().array ?? []
        var held: [String: Int64] = [:]
        for (device, score) in zip(devices, scores) {
            if let text = score.string, let end = Double(text), Int64(end) > now { held[device] = Int64(end) }
        }
        return held
    }

    package func hold(_ until: [String: Int64], now: Int64) async throws {
        guard !until.isEmpty else { return }
        var arguments: [any RedisArgument] = [keys.deviceBackOffs, "GT"]
        for (device, end) in until.sorted(by: { $0.key < $1.key }) { arguments += [end, device] }
        let replies = try await redis.pipeline([RedisCommand("ZADD", arguments: arguments),
                                                RedisCommand("ZREMRANGEBYSCORE", keys.deviceBackOffs, "-inf", "(\(now)")])
        for reply in replies { try reply.throwingError() }
    }
}
