import Foundation
import Hiredis
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import Testing

/// Apple's two services, each stood in for by an apns-sim that refuses the other's device tokens
/// with 400 `BadDeviceToken`, as Apple does: the adapter sends each push to its installation's
/// environment, with one provider token, opens no sandbox connection before a sandbox push, and
/// holds each service on its own.
@Suite("APNs environments")
struct APNSEnvironmentTests {
    static let productionToken = LocalAPNS.token(0x1001)
    static let sandboxToken = LocalAPNS.token(0x2002)

    /// A production and a sandbox simulator, an adapter over both, and Redis for the token.
    static func withServices(
        sandboxFaults: APNSFaultPlan = APNSFaultPlan(),
        _ body: (_ production: LocalAPNS, _ sandbox: LocalAPNS, _ adapter: APNSPushAdapter) async throws -> Void
    ) async throws {
        try await withRedisServer { server in
            let production = try await LocalAPNS.start(rules: try LocalAPNS.rules(otherEnvironmentTokens: [sandboxToken]))
            let sandbox = try await LocalAPNS.start(
                rules: try LocalAPNS.rules(otherEnvironmentTokens: [productionToken]), faults: sandboxFaults)
            let redis = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apns-env").dropLast())
            let adapter = APNSPushAdapter(
                client: production.client, sandboxClient: sandbox.client, topic: LocalAPNS.topic,
                token: APNSSharedToken(redis: redis, prefix: prefix, signer: try LocalAPNS.signer()))
            do {
                try await body(production, sandbox, adapter)
            } catch {
                try? await production.stop()
                try? await sandbox.stop()
                await redis.close()
                throw error
            }
            try await production.stop()
            try await sandbox.stop()
            await redis.close()
        }
    }

    static func paths(_ apns: LocalAPNS) -> [String] { apns.requests.compactMap { $0["path"] as? String } }

    @Test func eachPushGoesToItsEnvironmentsServiceWithOneProviderToken() async throws {
        try await Self.withServices { production, sandbox, adapter in
            // Production only: the sandbox client stays unconnected.
            let first = try await adapter.send([LocalAPNS.push(token: Self.productionToken, notification: 1)])
            #expect(first == [.sent(adapterID: APNSID.make(notification: 1, installation: "inst-00001001"))])
            #expect(sandbox.client.connectionsOpened == 0 && sandbox.requests.isEmpty)

            // Both in one batch: each reaches its own service, and only it.
            let mixed = try await adapter.send([
                LocalAPNS.push(token: Self.sandboxToken, notification: 2, environment: .sandbox),
                LocalAPNS.push(token: Self.productionToken, notification: 2),
            ])
            #expect(
                mixed == [
                    .sent(adapterID: APNSID.make(notification: 2, installation: "inst-00002002")),
                    .sent(adapterID: APNSID.make(notification: 2, installation: "inst-00001001")),
                ])
            #expect(Self.paths(production) == Array(repeating: "/3/device/\(Self.productionToken)", count: 2))
            #expect(Self.paths(sandbox) == ["/3/device/\(Self.sandboxToken)"])
            #expect(sandbox.client.connectionsOpened >= 1)
            // The team's one provider token, at both.
            let tokens = (production.requests + sandbox.requests).compactMap { $0["token"] as? String }
            #expect(tokens.count == 3 && Set(tokens).count == 1, "\(tokens)")
        }
    }

    @Test func aTokenSentToTheOtherServiceIsRefusedAsAppleRefusesIt() async throws {
        try await Self.withServices { production, sandbox, adapter in
            // A development build's token registered without its environment: production refuses it.
            let outcomes = try await adapter.send([LocalAPNS.push(token: Self.sandboxToken)])
            #expect(outcomes == [.failed(reason: "BadDeviceToken", retryable: false)])
            #expect(production.requests.map { $0["status"] as? Int } == [400])
            #expect(production.requests.first?["reason"] as? String == "BadDeviceToken")
            #expect(sandbox.requests.isEmpty)
        }
    }

    @Test func aHoldOnTheSandboxLeavesProductionSending() async throws {
        var faults = APNSFaultPlan()
        faults.outage = SimulatedOutage(after: 0, seconds: 300)
        try await Self.withServices(sandboxFaults: faults) { production, sandbox, adapter in
            let batch = [
                LocalAPNS.push(token: Self.sandboxToken, notification: 3, environment: .sandbox),
                LocalAPNS.push(token: Self.productionToken, notification: 3),
            ]
            for round in 0..<2 {
                let outcomes = try await adapter.send(batch)
                guard case .deferred = outcomes[0] else {
                    Issue.record("round \(round): the sandbox push should wait for the sandbox's Retry-After, got \(outcomes[0])")
                    return
                }
                #expect(outcomes[1] == .sent(adapterID: APNSID.make(notification: 3, installation: "inst-00001001")), "round \(round)")
            }
            // The second round asked the held sandbox nothing; production answered both.
            #expect(sandbox.requests.map { $0["status"] as? Int } == [429])
            #expect(production.requests.map { $0["status"] as? Int } == [200, 200])
        }
    }

    @Test func aSandboxPushWithoutASandboxServiceFailsUnsent() async throws {
        try await withRedisServer { server in
            let production = try await LocalAPNS.start()
            let redis = RedisConnection(configuration: server.configuration)
            let adapter = APNSPushAdapter(
                client: production.client, topic: LocalAPNS.topic,
                token: APNSSharedToken(
                    redis: redis, prefix: String(uniqueKeyPrefix("apns-env").dropLast()),
                    signer: try LocalAPNS.signer()))
            let outcomes = try await adapter.send([
                LocalAPNS.push(token: Self.sandboxToken, environment: .sandbox),
                LocalAPNS.push(token: Self.productionToken),
            ])
            guard case .failed(let reason, false) = outcomes[0] else {
                Issue.record("expected a permanent failure, got \(outcomes[0])")
                return
            }
            #expect(reason.contains("no sandbox service"))
            #expect(outcomes[1] == .sent(adapterID: APNSID.make(notification: 42, installation: "inst-00001001")))
            #expect(Self.paths(production) == ["/3/device/\(Self.productionToken)"])
            try await production.stop()
            await redis.close()
        }
    }
}
