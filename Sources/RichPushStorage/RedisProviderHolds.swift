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
        _ = try await redis.run(Self.holdScript, keys: [keys.providerHold(scope)], arguments: [end])
    }

    /// KEYS: the hold. ARGV: its end (ms). Keeps the later of the two ends.
    static let holdScript = RedisScript("""
    local current = tonumber(redis.call('GET', KEYS[1]) or '0')
    local wanted = tonumber(ARGV[1])
    if wanted > current then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1]) end
    return 1
    """)
}
