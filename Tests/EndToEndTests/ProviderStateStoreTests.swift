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
            let holds = RedisProviderPauses(redis: redis, keys: keys)
            let now = ProviderPause.wallClock()
            #expect(try await holds.pauseEnd("fcm:p") == nil)
            // Minutes, not seconds: a hold's key expires at its end, and a busy machine stalled this
            // test for more than 20 s between these lines (a hold of 20 s had gone when it was read).
            try await holds.pause("fcm:p", until: now + 1_200_000)
            try await holds.pause("fcm:p", until: now + 300_000)
            #expect(try await holds.pauseEnd("fcm:p") == now + 1_200_000, "a shorter hold does not cut a longer one short")
            #expect(try await holds.pauseEnd("apns:t") == nil, "a hold is per scope")
            // A hold that ends expires with it: nothing to clear.
            try await holds.pause("apns:t", until: ProviderPause.wallClock() + 300)
            try await waitUntil(timeout: .seconds(60), "the hold to end") { try await holds.pauseEnd("apns:t") == nil }
            #expect(try await redis.send("EXISTS", "\(keys.prefix):pause:apns:t").int == 0)
        }
    }

    /// Two adapters of a fleet share the hold one of them learned: the other sends nothing until it ends.
    @Test func aHoldLearnedByOneProcessHoldsTheOther() async throws {
        try await Self.withRedis { redis, keys in
            let first = ProviderPause(scope: "fcm:p", shared: RedisProviderPauses(redis: redis, keys: keys))
            let second = ProviderPause(scope: "fcm:p", shared: RedisProviderPauses(redis: redis, keys: keys))
            #expect(try await second.remaining() == nil)
            await first.pause(for: .seconds(120))
            let left = try #require(try await second.remaining())
            #expect(left > .seconds(60) && left <= .seconds(120))
            #expect(second.remainingHere != nil, "learned once, it holds without asking again")
        }
    }

    /// A device is claimed by one round at a time, for the whole fleet: another owner finds it in
    /// flight until its owner releases it (no one else can) or the claim lapses; the holds written
    /// with a release are seen by the next claim, the later end wins, a hold is over at its end;
    /// ended holds and lapsed claims are trimmed (times given, not read from the clock).
    @Test func aDeviceIsClaimedByOneRoundAtATimeAndHeldUntilItsTime() async throws {
        try await Self.withRedis { redis, keys in
            let one = RedisDeviceBackOffs(redis: redis, keys: keys)
            let two = RedisDeviceBackOffs(redis: redis, keys: keys)
            let s1 = "webpush:https://push.example/s1"
            #expect(try await one.claim([s1, "fcm:t2", s1], owner: "a", now: 1_000, until: 31_000).isEmpty)
            #expect(try await one.claim([s1], owner: "a", now: 1_500, until: 31_000).isEmpty, "its owner may claim it again")
            #expect(try await two.claim([s1, "fcm:t3"], owner: "b", now: 2_000, until: 32_000) == [s1: .inFlight(until: 31_000)])
            try await two.release([s1], owner: "b", holding: [:], now: 2_100)
            #expect(
                try await two.claim([s1], owner: "b", now: 2_200, until: 32_000) == [s1: .inFlight(until: 31_000)],
                "only its owner releases a claim")

            try await one.release([s1, "fcm:t2"], owner: "a", holding: [s1: 61_000, "fcm:t2": 5_000], now: 3_000)
            try await one.release([], owner: "a", holding: [s1: 31_000], now: 3_000)
            #expect(
                try await two.claim([s1, "fcm:t2"], owner: "b", now: 4_000, until: 34_000) == [
                    s1: .held(until: 61_000), "fcm:t2": .held(until: 5_000),
                ],
                "released with the holds its answers asked for; a shorter hold does not cut a longer one")
            #expect(try await two.claim(["fcm:t2"], owner: "b", now: 5_000, until: 35_000).isEmpty, "a hold is over at its end")

            #expect(try await one.claim(["fcm:t3"], owner: "a", now: 40_000, until: 70_000).isEmpty, "b's claim of t3 lapsed at 32 000")
            try await one.release([], owner: "a", holding: ["apns:t4": 90_000], now: 62_000)
            let backoff = "\(keys.prefix):device-backoff"
            #expect(
                try await redis.send("ZRANGE", backoff, 0, -1).array?.compactMap(\.string) == ["apns:t4"],
                "ended holds are trimmed when new ones are written")
            #expect(
                try await redis.send("HGETALL", "\(keys.prefix):device-claims:{\(backoff)}").array?.compactMap(\.string) == [
                    "fcm:t3", "70000:a",
                ],
                "lapsed claims are trimmed when new ones are taken")
        }
    }

    @Test func deadTokensAreFoundWithWhenAndOldMarksAreTrimmed() async throws {
        try await Self.withRedis { redis, keys in
            let gone = RedisGoneTokens(redis: redis, keys: keys, retention: .seconds(60))
            #expect(try await gone.gone(among: ["apns:a", "apns:b"]).isEmpty)
            try await gone.markGone(["apns:a"], at: 1_000)
            try await gone.markGone(["apns:b", "fcm:c"], at: 500_000)
            #expect(
                try await gone.gone(among: ["apns:a", "apns:b", "fcm:c", "fcm:d"]) == ["apns:b": 500_000, "fcm:c": 500_000],
                "a's mark is older than the retention before the newest: trimmed")
            #expect(try await gone.gone(among: []).isEmpty)
        }
    }
}
