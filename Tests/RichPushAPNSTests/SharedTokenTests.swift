import Foundation
import Hiredis
import RedisTestSupport
import RichPushCredentials
import Synchronization
import Testing

/// The fleet-wide token store itself, with a mint that counts: however many workers ask at once,
/// one token is minted (each mint is a token exchange at Google, or a new token Apple counts).
@Suite("Shared token")
struct SharedTokenTests {
    @Test func manyWorkersAskingAtOnceMintOneToken() async throws {
        try await withRedisServer { server in
            let key = String(uniqueKeyPrefix("shared").dropLast()) + ":token"
            let mints = Atomic<Int>(0)
            let workers = (0..<12).map { _ in
                // The lock's expiry (a crashed minter's bound) is not under test: long enough that a
                // starved minter on a busy machine keeps it.
                SharedToken(
                    redis: RedisConnection(configuration: server.configuration), key: key, refreshAfter: .seconds(3000), localTTL: .zero,
                    lockTTL: .seconds(60)
                ) { now in
                    mints.add(1, ordering: .relaxed)
                    // A slow exchange, so readers pile up behind the lock and race its release.
                    try await Task.sleep(for: .milliseconds(50))
                    return SharedToken.Minted(
                        token: "t\(UUID().uuidString.prefix(8))", issuedAt: now, expiresAt: now.addingTimeInterval(3600))
                }
            }
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for worker in workers { for _ in 0..<5 { group.addTask { try await worker.current() } } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(mints.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aTokenNearItsExpiryIsReplaced() async throws {
        try await withRedisServer { server in
            let key = String(uniqueKeyPrefix("shared").dropLast()) + ":token"
            let mints = Atomic<Int>(0)
            // A lock outliving a starved minter, as above: a first mint that outlived a 5 s lock on
            // a busy machine was refused and made again (t2 where t1 was expected).
            let token = SharedToken(
                redis: RedisConnection(configuration: server.configuration), key: key, refreshAfter: .seconds(3000),
                expiryMargin: .seconds(300), localTTL: .zero, lockTTL: .seconds(60)
            ) { now in
                SharedToken.Minted(
                    token: "t\(mints.add(1, ordering: .relaxed).newValue)", issuedAt: now, expiresAt: now.addingTimeInterval(600))
            }
            let now = Date()
            let first = try await token.current(now: now)
            let later = try await token.current(now: now.addingTimeInterval(200))
            // Within five minutes of its expiry: a new one.
            let nearExpiry = try await token.current(now: now.addingTimeInterval(301))
            #expect([first, later, nearExpiry] == ["t1", "t1", "t2"])
        }
    }
}
