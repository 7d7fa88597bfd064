import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdBcrypt
import HummingbirdTesting
import Logging
import NIOCore
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

@testable import RichPushAPI

/// What a hostile-input run timed: a name that does not exist must cost what one that does
/// costs, and someone else's notification id what a missing one does.
@Suite("Equal timing")
struct EqualTimingTests {
    @Test func theDecoyTakesTheCostOfTheStoredHashes() {
        let decoy = DecoyHash(cost: 5)
        #expect(DecoyHash.cost(of: decoy.hash) == 5)
        #expect(!Bcrypt.verify("", hash: decoy.hash) && !Bcrypt.verify("x", hash: decoy.hash))
        decoy.learn(from: Bcrypt.hash("pw", cost: 7))
        #expect(decoy.currentCost == 7 && DecoyHash.cost(of: decoy.hash) == 7)
        #expect(!Bcrypt.verify("pw", hash: decoy.hash))
        // Hashes our bcrypt cannot read teach nothing.
        for unreadable in ["", "plain", "$2y$10$abcdefghijklmnopqrstuv", "$2b$3x$abc", "$2b$32$abc", "$2b$03$abc"] {
            decoy.learn(from: unreadable)
            #expect(decoy.currentCost == 7, "\(unreadable)")
        }
        #expect(DecoyHash.cost(of: "$2a$12$abc") == 12)
    }

    /// Users at cost 12 while the API was started with cost 4: once a stored hash was verified, an
    /// unknown name costs what a known one does (before, the decoy stayed at the configured cost,
    /// 256 times less work). Medians of three, with a tenfold margin for a busy machine.
    @Test func anUnknownNameTakesAsLongAsAKnownOne() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            _ = try await RedisUserStore(redis: fixture.redis, keys: fixture.keys)
                .create(User(name: "carol", role: .user), passwordHash: Bcrypt.hash("carol-pw", cost: 12))
            try await fixture.test { client in
                func timed(_ user: String) async throws -> Duration {
                    let start = ContinuousClock.now
                    try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic(user, "wrong-pw")) {
                        #expect($0.status == .unauthorized, "\(user): \($0.status)")
                    }
                    return ContinuousClock.now - start
                }
                var known: [Duration] = [], unknown: [Duration] = []
                for attempt in 0..<3 {
                    known.append(try await timed("carol"))
                    unknown.append(try await timed("ghost\(attempt)"))
                }
                let knownMedian = known.sorted()[1], unknownMedian = unknown.sorted()[1]
                #expect(unknownMedian * 10 > knownMedian, "unknown \(unknownMedian) vs known \(knownMedian)")
            }
        }
    }

    /// A 404 for bob's read of alice's notification and for an id that does not exist make the
    /// same Redis round trips with the same commands, on every route that reads by id (before, a
    /// missing id was answered after one round trip, someone else's after two or three). Counted,
    /// not timed: the count does not depend on the machine's load.
    @Test func someoneElsesIdCostsWhatAMissingOneDoes() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.auth.cacheTTL = .seconds(3600) }
            let recording = RecordingRedis(base: fixture.redis)
            try await fixture.test(on: recording) { client in
                let bobDevice = try await client.register("bob", handle: "token-b")
                let foreign = try #require(try await client.sendImage("alice").json["id"] as? String)
                let missing = String(Int(foreign)! + 1000)
                let bob = APIFixture.basic("bob")
                let device = "?installation=\(bobDevice)"
                let reads: [(name: String, method: HTTPRequest.Method, path: (String) -> String, headers: HTTPFields, body: ByteBuffer?)] =
                    [
                        ("payload", .get, { "/api/notifications/\($0)" }, [:], nil),
                        ("payload via a device", .get, { "/api/notifications/\($0)\(device)" }, [:], nil),
                        ("payload, If-None-Match *", .get, { "/api/notifications/\($0)\(device)" }, [.ifNoneMatch: "*"], nil),
                        ("payload, If-None-Match a guess", .get, { "/api/notifications/\($0)\(device)" }, [.ifNoneMatch: "\"guess\""], nil),
                        ("status", .get, { "/api/notifications/\($0)/status" }, [:], nil),
                        (
                            "receipt", .post, { "/api/notifications/\($0)/receipts" }, [:],
                            APIFixture.json(["kind": "opened", "installation": bobDevice])
                        ),
                        (
                            "receipt of an unknown kind", .post, { "/api/notifications/\($0)/receipts" }, [:],
                            APIFixture.json(["kind": "lost", "installation": bobDevice])
                        ),
                        ("cancel", .delete, { "/api/notifications/\($0)" }, [:], nil),
                    ]
                func trips(
                    _ read: (name: String, method: HTTPRequest.Method, path: (String) -> String, headers: HTTPFields, body: ByteBuffer?),
                    _ id: String
                ) async throws -> [String] {
                    _ = recording.take()
                    try await client.execute(uri: read.path(id), method: read.method, headers: bob + read.headers, body: read.body) {
                        response in
                        #expect(
                            response.status == .notFound && response.errorMessage == "no notification \(id)",
                            "\(read.name) \(id): \(response.status)")
                    }
                    return recording.take()
                }
                for read in reads {
                    // Once each first, so that what a process remembers (users, owners) is the same for both.
                    _ = try await trips(read, foreign)
                    _ = try await trips(read, missing)
                    let foreignTrips = try await trips(read, foreign), missingTrips = try await trips(read, missing)
                    #expect(foreignTrips == missingTrips, "\(read.name): someone else's id \(foreignTrips), a missing one \(missingTrips)")
                    #expect(!foreignTrips.isEmpty, "\(read.name) made no round trip")
                }
            }
        }
    }
}
