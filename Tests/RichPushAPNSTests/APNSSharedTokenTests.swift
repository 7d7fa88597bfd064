import Crypto
import Foundation
import Hiredis
import RedisTestSupport
import RichPushAPNS
import Testing

/// The provider token shared by a fleet through a real Redis.
@Suite("APNs token shared through Redis")
struct APNSSharedTokenTests {
    static func fleet(_ server: RedisServer, workers: Int = 2, prefix: String) throws -> ([APNSSharedToken], RedisConnection) {
        let redis = RedisConnection(configuration: server.configuration)
        let signer = try APNSSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        // Each worker has its own connection, as separate processes would.
        let tokens = (0..<workers).map { _ in
            APNSSharedToken(redis: RedisConnection(configuration: server.configuration), prefix: prefix, signer: signer, localTTL: .zero)
        }
        return (tokens, redis)
    }

    @Test func aFleetSharesOneTokenAndRefreshesItOnce() async throws {
        try await withRedisServer { server in
            let prefix = String(uniqueKeyPrefix("apns").dropLast())
            let (workers, redis) = try Self.fleet(server, workers: 4, prefix: prefix)
            let start = Date()
            let first = try await withThrowingTaskGroup(of: String.self) { group in
                for worker in workers { for _ in 0..<10 { group.addTask { try await worker.current(now: start) } } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(first.count == 1, "every worker uses the same token")
            // 41 minutes later every worker moves to one new token.
            let later = start.addingTimeInterval(41 * 60)
            let second = try await withThrowingTaskGroup(of: String.self) { group in
                for worker in workers { for _ in 0..<10 { group.addTask { try await worker.current(now: later) } } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(second.count == 1 && second != first)
            #expect(try await redis.send("TTL", "\(prefix):apns:token:DEF123GHIJ:ABC123DEFG").int ?? 0 > 0)
            await redis.close()
        }
    }

    @Test func aRejectedTokenIsReplacedOnceForEveryone() async throws {
        try await withRedisServer { server in
            let (workers, redis) = try Self.fleet(server, workers: 3, prefix: String(uniqueKeyPrefix("apns").dropLast()))
            let now = Date()
            let rejected = try await workers[0].current(now: now)
            let replacements = try await withThrowingTaskGroup(of: String.self) { group in
                for worker in workers { group.addTask { try await worker.replace(rejected: rejected, now: now.addingTimeInterval(1)) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(replacements.count == 1 && !replacements.contains(rejected))
            #expect(try await workers[1].current(now: now.addingTimeInterval(2)) == replacements.first)
            await redis.close()
        }
    }

    @Test func aLockLeftByADeadWorkerExpires() async throws {
        try await withRedisServer { server in
            let prefix = String(uniqueKeyPrefix("apns").dropLast())
            let (workers, redis) = try Self.fleet(server, workers: 1, prefix: prefix)
            // The clock starts before the lock exists, so however slow the machine, the token
            // cannot come sooner than the lock's 300 ms.
            let clock = ContinuousClock.now
            try await redis.send("SET", "\(prefix):apns:token:DEF123GHIJ:ABC123DEFG:lock", "dead", "PX", 300)
            let token = try await workers[0].current()
            #expect(!token.isEmpty)
            #expect(ContinuousClock.now - clock >= .milliseconds(250))
            await redis.close()
        }
    }
}
