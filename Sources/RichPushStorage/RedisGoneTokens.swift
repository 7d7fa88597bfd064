package import Hiredis
import RichPushCore

/// Dead device tokens in one sorted set, scored by when the provider declared them dead. Marks
/// older than `retention` are trimmed when new ones are added: by then the installation was long
/// removed, and a token that registers again is judged by its registration's time anyway.
package struct RedisGoneTokens: GoneTokens {
    let redis: any RedisClient
    let keys: StorageKeys
    let retention: Duration

    package init(redis: any RedisClient, keys: StorageKeys, retention: Duration = .seconds(7 * 86_400)) {
        self.redis = redis
        self.keys = keys
        self.retention = retention
    }

    package func gone(among handles: [String]) async throws -> [String: Int64] {
        guard !handles.isEmpty else { return [:] }
        let scores = try await redis.send(RedisCommand("ZMSCORE", arguments: [keys.goneTokens] + handles)).array ?? []
        var gone: [String: Int64] = [:]
        for (handle, score) in zip(handles, scores) {
            if let text = score.string, let time = Double(text) { gone[handle] = Int64(time) }
        }
        return gone
    }

    package func markGone(_ handles: [String], at time: Int64) async throws {
        guard !handles.isEmpty else { return }
        var arguments: [any RedisArgument] = [keys.goneTokens]
        for handle in handles { arguments += [time, handle] }
        let oldest = time - Int64(retention.components.seconds) * 1000
        let replies = try await redis.pipeline([
            RedisCommand("ZADD", arguments: arguments),
            RedisCommand("ZREMRANGEBYSCORE", keys.goneTokens, "-inf", "(\(oldest)"),
        ])
        for reply in replies { try reply.throwingError() }
    }
}
