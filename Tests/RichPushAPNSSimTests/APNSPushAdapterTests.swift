import Crypto
import Foundation
import Hiredis
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import RichPushHTTP2
import RichPushSimTLS
import Synchronization
import Testing

/// The APNs adapter against the local APNs over TLS and HTTP/2, with the token shared in Redis.
@Suite("APNs adapter against apns-sim")
struct APNSPushAdapterTests {
    static func push(_ token: String, priority: Int = 5, id: String = "42") -> OutgoingPush {
        OutgoingPush(
            notification: Int(id) ?? 0,
            installation: Installation(
                id: "inst-\(token.prefix(4))", platform: .apns, handle: token, tags: [], owner: "alice", updatedAt: 0),
            rendered: RenderedPush(
                payload: Array(#"{"aps":{"content-available":1},"richId":"42"}"#.utf8), pushType: "background",
                priority: priority, expiration: Int(Date().timeIntervalSince1970) + 3600, collapseID: id))
    }

    @Test func sendsRefusesBeforeSendingAndReplacesARejectedToken() async throws {
        try await withRedisServer { server in
            let signer = try LocalAPNS.signer()
            let apns = try await LocalAPNS.start(responseIDHeader: nil)
            let client = apns.client
            let redis = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apns").dropLast())
            let token = APNSSharedToken(redis: redis, prefix: prefix, signer: signer)
            let adapter = APNSPushAdapter(client: client, topic: "com.example.richpush", token: token)
            do {
                let good = String(repeating: "ab", count: 32)
                let outcomes = try await adapter.send([Self.push(good), Self.push(good, priority: 10), Self.push("zz")])
                #expect(outcomes.first == .sent(adapterID: APNSID.make(notification: 42, installation: "inst-abab")))
                guard case .failed(let reason, let retryable) = outcomes[1], case .failed(_, let retryable2) = outcomes[2] else {
                    Issue.record("expected refusals, got \(outcomes)")
                    throw CancellationError()
                }
                #expect(reason.contains("BadPriority") && !retryable && !retryable2)
                // Refused by the adapter: never reached the server.
                #expect(apns.lines.count == 1)

                // A token Apple does not accept (signed by another key) is replaced once, and the push goes through.
                let rogue = try APNSSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
                let stale = try rogue.token(issuedAt: Date())
                try await redis.send(
                    "HSET", "\(prefix):apns:token:DEF123GHIJ:ABC123DEFG", "token", stale, "iat", Int(Date().timeIntervalSince1970))
                let otherAdapter = APNSPushAdapter(
                    client: client, topic: "com.example.richpush",
                    token: APNSSharedToken(redis: redis, prefix: prefix, signer: signer))
                #expect(
                    try await otherAdapter.send([Self.push(good, id: "43")]) == [
                        .sent(adapterID: APNSID.make(notification: 43, installation: "inst-abab"))
                    ])
                let statuses = apns.lines.suffix(2).map { $0.contains(#""status":403"#) ? 403 : 200 }
                #expect(statuses == [403, 200])
                #expect(try await redis.send("HGET", "\(prefix):apns:token:DEF123GHIJ:ABC123DEFG", "token").string != stale)
            } catch {
                try await apns.stop()
                await redis.close()
                throw error
            }
            try await apns.stop()
            await redis.close()
        }
    }

    @Test func unregisteredRemovesOnlyRegistrationsOlderThanApplesTimestamp() async throws {
        try await withRedisServer { server in
            var faults = APNSFaultPlan()
            faults.failures = try APNSFaultPlan.failures(parsing: "410:100%")
            let since: Int64 = 1_800_000_000_000
            faults.unregisteredAt = since
            let apns = try await LocalAPNS.start(faults: faults)
            let redis = RedisConnection(configuration: server.configuration)
            let adapter = APNSPushAdapter(
                client: apns.client, topic: LocalAPNS.topic,
                token: APNSSharedToken(
                    redis: redis, prefix: String(uniqueKeyPrefix("apns").dropLast()),
                    signer: try LocalAPNS.signer()))
            let outcomes = try await adapter.send([
                LocalAPNS.push(token: LocalAPNS.token(1), registeredAt: since - 1000),
                LocalAPNS.push(token: LocalAPNS.token(2), registeredAt: since + 1000),
            ])
            #expect(outcomes[0] == .invalidToken(reason: "Unregistered"))
            guard case .failed(let reason, let retryable) = outcomes[1] else {
                Issue.record("expected the newer registration to be kept, got \(outcomes[1])")
                return
            }
            #expect(!retryable && reason.contains("the registration is newer"))
            #expect(apns.requests.map { $0["status"] as? Int } == [410, 410])
            try await apns.stop()
            await redis.close()
        }
    }

    @Test func whenNoPushReachesAPNsTheBatchThrows() async throws {
        try await withRedisServer { server in
            // A port that refuses connections.
            try await RedisServer.withRefusingPort { port in
                let client = try HTTP2Client(
                    configuration: HTTP2Client.Configuration(
                        endpoint: HTTP2Client.Endpoint(host: "127.0.0.1", port: port, usesTLS: true),
                        connectTimeout: .seconds(2)))
                let redis = RedisConnection(configuration: server.configuration)
                let adapter = APNSPushAdapter(
                    client: client, topic: LocalAPNS.topic,
                    token: APNSSharedToken(
                        redis: redis, prefix: String(uniqueKeyPrefix("apns").dropLast()),
                        signer: try LocalAPNS.signer()))
                await #expect(throws: APNSUnreachable.self) {
                    try await adapter.send([LocalAPNS.push(token: LocalAPNS.token(1)), LocalAPNS.push(token: LocalAPNS.token(2))])
                }
                // A push refused before sending is still a plain permanent failure, not a reason to throw.
                let refused = try await adapter.send([LocalAPNS.push(token: "zz")])
                guard refused.count == 1, case .failed(let reason, false) = refused[0] else {
                    Issue.record("expected a permanent failure, got \(refused)")
                    return
                }
                #expect(reason.hasPrefix("never sent: BadDeviceToken"))
                client.shutdown()
                await redis.close()
            }
        }
    }

    @Test func anExpiredProviderTokenIsReplacedOnceThenThePushIsRetriedLater() async throws {
        try await withRedisServer { server in
            var faults = APNSFaultPlan()
            faults.failures = try APNSFaultPlan.failures(parsing: "403:100%")
            let apns = try await LocalAPNS.start(faults: faults)
            let redis = RedisConnection(configuration: server.configuration)
            let adapter = APNSPushAdapter(
                client: apns.client, topic: LocalAPNS.topic,
                token: APNSSharedToken(
                    redis: redis, prefix: String(uniqueKeyPrefix("apns").dropLast()),
                    signer: try LocalAPNS.signer()))
            let outcomes = try await adapter.send([LocalAPNS.push(token: LocalAPNS.token(1))])
            #expect(outcomes == [.failed(reason: "ExpiredProviderToken", retryable: true)])
            // Sent with the first token, then once with a new one: not a loop of new tokens.
            let requests = apns.requests
            #expect(requests.map { $0["status"] as? Int } == [403, 403])
            #expect(Set(requests.compactMap { $0["token"] as? String }).count == 2)
            try await apns.stop()
            await redis.close()
        }
    }
}

extension APNSPushAdapterTests {
    /// A batch larger than the adapter's concurrency goes in chunks, several in flight; every
    /// outcome comes back at its push's position.
    @Test func chunksKeepTheirOrder() async throws {
        try await withRedisServer { server in
            let apns = try await LocalAPNS.start()
            let redis = RedisConnection(configuration: server.configuration)
            let adapter = APNSPushAdapter(
                client: apns.client, topic: LocalAPNS.topic,
                token: APNSSharedToken(
                    redis: redis, prefix: String(uniqueKeyPrefix("apns").dropLast()),
                    signer: try LocalAPNS.signer()),
                concurrency: 7)
            let pushes = (1...45).map { LocalAPNS.push(token: LocalAPNS.token($0), installation: "inst-\($0)") }
            let outcomes = try await adapter.send(pushes)
            #expect(outcomes.count == 45)
            for (push, outcome) in zip(pushes, outcomes) {
                #expect(
                    outcome == .sent(adapterID: APNSID.make(notification: 42, installation: push.installation.id)),
                    "\(push.installation.id): \(outcome)")
            }
            try await apns.stop()
            await redis.close()
        }
    }
}
