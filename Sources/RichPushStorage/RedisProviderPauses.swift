package import Hiredis
import RichPushCore

/// Provider pauses as Redis strings: the pause's end in UNIX milliseconds, expiring at that time
/// (`PXAT`), so a pause that is over costs nothing and no one has to clear it.
package struct RedisProviderPauses: ProviderPauses {
    let redis: any RedisClient
    let keys: StorageKeys

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.redis = redis
        self.keys = keys
    }

    package func pauseEnd(_ scope: String) async throws -> Int64? {
        try await redis.send("GET", keys.providerPause(scope)).int.map(Int64.init)
    }

    package func pause(_ scope: String, until end: Int64) async throws {
        _ = try await redis.run(Self.pauseScript, PauseCall(pause: keys.providerPause(scope), end: end))
    }

    /// A pause's key and its end (ms).
    struct PauseCall {
        let pause: String, end: Int64
    }

    /// Keeps the later of the two ends.
    static let pauseScript = LuaScript<PauseCall, Never>(
        [.key("pause", \.pause), .argument("ending", \.end)],
        body: """
            local current = tonumber(redis.call('GET', pause) or '0')
            if tonumber(ending) > current then redis.call('SET', pause, ending, 'PXAT', ending) end
            return 1

            """)
}
