package import Hiredis
import RichPushCore

/// Provider holds as Redis strings: the hold's end in UNIX milliseconds, expiring at that time
/// (`PXAT`), so a hold that is over costs nothing and no one has to clear it.
package struct RedisProviderHolds: ProviderHolds {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func holdEnd(_ scope: String) async throws -> Int64? {
        try await redis.send("GET", keys.providerHold(scope)).int.map(Int64.init)
    }

    package func hold(_ scope: String, until end: Int64) async throws {
        _ = try await redis.run(Self.holdScript, HoldCall(hold: keys.providerHold(scope), end: end))
    }

    /// A hold's key and its end (ms).
    struct HoldCall {
        let hold: String, end: Int64
    }

    /// Keeps the later of the two ends.
    static let holdScript = LuaScript<HoldCall, Never>(
        [.key("hold", \.hold), .argument("ending", \.end)],
        body: """
            local current = tonumber(redis.call('GET', hold) or '0')
            if tonumber(ending) > current then redis.call('SET', hold, ending, 'PXAT', ending) end
            return 1

            """)
}
