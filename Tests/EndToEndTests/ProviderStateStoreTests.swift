import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// The fleet's provider holds and dead tokens against a real Redis.
@Suite("Provider holds and dead tokens in Redis")
struct ProviderStateStoreTests {
    static func withRedis(_ body: (RedisConnection, StorageKeys) async throws -> Void) async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("provider").dropLast()))
            do {
                try await body(redis, keys)
            } catch {
                await redis.close()
                throw error
            }
            await redis.close()
        }
    }

    @Test func theLaterHoldWinsAndAHoldEndsOnItsOwn() async throws {
        try await Self.withRedis { redis, keys in
            let holds = RedisProviderHolds(redis: redis, keys: keys)
            let now = ProviderHold.wallClock()
            #expect(try await holds.holdEnd("fcm:p") == nil)
            // Minutes, not seconds: a hold's key expires at its end, and a busy machine stalled this
            // test for more than 20 s between these lines (a hold of 20 s had gone when it was read).
            try await holds.hold("fcm:p", until: now + 1_200_000)
            try await holds.hold("fcm:p", until: now + 300_000)
            #expect(try await holds.holdEnd("fcm:p") == now + 1_200_000, "a shorter hold does not cut a longer one short")
            #expect(try await holds.holdEnd("apns:t") == nil, "a hold is per scope")
            // A hold that ends expires with it: nothing to clear.
            try await holds.hold("apns:t", until: ProviderHold.wallClock() + 300)
            try await waitUntil(timeout: .seconds(60), "the hold to end") { try await holds.holdEnd("apns:t") == nil }
            #expect(try await redis.send("EXISTS", "\(keys.prefix):hold:apns:t").int == 0)
        }
    }

    /// Two adapters of a fleet share the hold one of them learned: the other sends nothing until it ends.
    @Test func aHoldLearnedByOneProcessHoldsTheOther() async throws {
        try await Self.withRedis { redis, keys in
            let first = ProviderHold(scope: "fcm:p", shared: RedisProviderHolds(redis: redis, keys: keys))
            let second = ProviderHold(scope: "fcm:p", shared: RedisProviderHolds(redis: redis, keys: keys))
            #expect(try await second.remaining() == nil)
            await first.hold(for: .seconds(120))
            let left = try #require(try await second.remaining())
            #expect(left > .seconds(60) && left <= .seconds(120))
            #expect(second.remainingHere != nil, "learned once, it holds without asking again")
        }
    }

    /// A device a provider asked to be left alone is held until its time, for every worker: the
    /// later end wins, a hold is per device, an ended hold is not reported and is trimmed at the
    /// next write (times given, not read from the clock).
    @Test func deviceBackOffsHoldUntilTheirTimeAndTheLaterEndWins() async throws {
        try await Self.withRedis { redis, keys in
            let backOffs = RedisDeviceBackOffs(redis: redis, keys: keys)
            let other = RedisDeviceBackOffs(redis: redis, keys: keys)
            #expect(try await backOffs.held(among: ["webpush:https://push.example/s1"], now: 1_000).isEmpty)
            try await backOffs.hold(["webpush:https://push.example/s1": 61_000, "fcm:t2": 5_000], now: 1_000)
            try await backOffs.hold(["webpush:https://push.example/s1": 31_000], now: 1_000)
            #expect(try await other.held(among: ["webpush:https://push.example/s1", "fcm:t2", "fcm:t3"], now: 2_000)
                == ["webpush:https://push.example/s1": 61_000, "fcm:t2": 5_000], "another worker sees them; a shorter hold does not cut a longer one")
            #expect(try await other.held(among: ["webpush:https://push.example/s1", "fcm:t2"], now: 5_000) == ["webpush:https://push.example/s1": 61_000],
                    "a hold is over at its end")
            try await backOffs.hold(["apns:t4": 90_000], now: 6_000)
            #expect(try await redis.send("ZRANGE", "\(keys.prefix):device-backoff", 0, -1).array?.compactMap(\.string) == ["webpush:https://push.example/s1", "apns:t4"],
                    "ended holds are trimmed when new ones are written")
        }
    }

    @Test func deadTokensAreFoundWithWhenAndOldMarksAreTrimmed() async throws {
        try await Self.withRedis { redis, keys in
            let gone = RedisGoneTokens(redis: redis, keys: keys, retention: .seconds(60))
            #expect(try await gone.gone(among: ["apns:a", "apns:b"]).isEmpty)
            try await gone.markGone(["apns:a"], at: 1_000)
            try await gone.markGone(["apns:b", "fcm:c"], at: 500_000)
            #expect(try await gone.gone(among: ["apns:a", "apns:b", "fcm:c", "fcm:d"]) == ["apns:b": 500_000, "fcm:c": 500_000],
                    "a's mark is older than the retention before the newest: trimmed")
            #expect(try await gone.gone(among: []).isEmpty)
        }
    }
}
