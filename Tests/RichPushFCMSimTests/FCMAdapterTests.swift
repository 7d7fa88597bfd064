import AsyncHTTPClient
import Foundation
import Hiredis
import Hummingbird
import Logging
import NIOCore
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushHTTP2
import RichPushSimTLS
import ServiceLifecycle
import Synchronization
import Testing
import _CryptoExtras

/// The FCM adapter against fcm-sim over real HTTP on loopback, with the access token shared
/// through a real Redis.
@Suite("FCM adapter against fcm-sim")
struct FCMAdapterTests {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// A service account whose token endpoint is the simulator's.
    static func account(port: Int) throws -> FCMServiceAccount {
        let object: [String: Any] = [
            "type": "service_account", "project_id": "richpush-demo", "private_key_id": "k1",
            "private_key": key.pkcs8PEMRepresentation, "client_email": "fcm@richpush-demo.iam.gserviceaccount.com",
            "token_uri": LocalFCM.tokenURI(port: port),
        ]
        return try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: object)))
    }

    /// fcm-sim on a free port for `body`, accepting this suite's service account (``key``).
    static func withSimulator(
        _ change: (inout FCMSimulator.Configuration) -> Void = { _ in },
        _ body: (LocalFCM) async throws -> Void
    ) async throws {
        try await LocalFCM.with(publicKeyPEM: key.publicKey.pemRepresentation, change, body)
    }

    static func push(_ token: String, id: Int = 42) throws -> OutgoingPush {
        let notification = RichNotification(
            id: id, message: "hello", richType: .text, contentType: "text/plain", payloadHash: "h", payloadSize: 1,
            creator: "alice", target: "username:alice", createdAt: 0)
        return OutgoingPush(
            notification: id,
            installation: Installation(id: "i-\(token)", platform: .fcm, handle: token, tags: [], owner: "alice", updatedAt: 0),
            rendered: try PushRenderer().renderFCM(notification, collapseID: String(id)))
    }

    @Test func sendsSharesOneAccessTokenAndMapsFCMsAnswers() async throws {
        try await withRedisServer { server in
            try await Self.withSimulator({
                $0.unregistered = 0.3; $0.seed = 3
            }) { fcm in
                let (simulator, requests) = (fcm.simulator, fcm.requests)
                let redis = RedisConnection(configuration: server.configuration)
                let prefix = String(uniqueKeyPrefix("fcm").dropLast())
                let account = try Self.account(port: fcm.port)
                // Two workers' adapters: one token exchange between them.
                let adapters = (0..<2).map { _ in
                    fcm.adapter(redis: server.configuration, prefix: prefix, account: account, localTTL: .zero)
                }
                let tokens = (0..<40).map { "fcm-token-\($0)" }
                async let first = adapters[0].send(try tokens[..<20].map { try Self.push($0) })
                async let second = adapters[1].send(try tokens[20...].map { try Self.push($0) })
                let outcomes = try await first + second
                let log = requests().filter { $0["issued"] == nil }
                let issuance = requests().filter { $0["issued"] != nil }
                let dead = Set(log.filter { $0["error"] as? String == "UNREGISTERED" }.compactMap { $0["token"] as? String })
                #expect(!dead.isEmpty && dead.count < 40, "unregistered share 0.3 of 40 gave \(dead.count)")
                for (token, outcome) in zip(tokens, outcomes) {
                    if dead.contains(token) {
                        #expect(outcome == .invalidToken(reason: "UNREGISTERED: Requested entity was not found."))
                    } else if case .sent(let name) = outcome {
                        #expect(name.hasPrefix("projects/richpush-demo/messages/0:"))
                    } else {
                        Issue.record("\(token): \(outcome)")
                    }
                }
                #expect(log.count == 40)
                #expect(simulator.tokensIssued == 1, "two workers, one token exchange; issued: \(issuance)")
                let stored = try await redis.send(
                    "HGET", "\(prefix):fcm:token:richpush-demo:fcm@richpush-demo.iam.gserviceaccount.com", "token"
                ).string
                #expect(stored?.hasPrefix("ya29.sim-") == true)

                // Every token revoked (as at expiry): 401, one new token for the fleet, the push goes through.
                simulator.revokeTokens()
                let again = try await adapters[1].send([try Self.push("fcm-token-x", id: 43)])
                guard case .sent = again[0] else {
                    Issue.record("expected sent after a refreshed token, got \(again)")
                    return
                }
                #expect(requests().filter { $0["issued"] == nil }.suffix(2).map { $0["status"] as? Int } == [401, 200])
                #expect(simulator.tokensIssued == 2)
                #expect(
                    try await redis.send("HGET", "\(prefix):fcm:token:richpush-demo:fcm@richpush-demo.iam.gserviceaccount.com", "token")
                        .string != stored)
                await redis.close()
            }
        }
    }

    @Test func quotaExceededHoldsTheWholeAdapter() async throws {
        try await withRedisServer { server in
            try await Self.withSimulator({ $0.transient = [(429, 1.0)] }) { fcm in
                let requests = fcm.requests
                let adapter = fcm.adapter(
                    redis: server.configuration, prefix: String(uniqueKeyPrefix("fcm").dropLast()),
                    account: try Self.account(port: fcm.port))
                let outcomes = try await adapter.send([try Self.push("a")])
                #expect(outcomes == [.deferred(reason: "QUOTA_EXCEEDED: Quota exceeded.", after: .seconds(1))])
                // FCM said Retry-After: 1: the next batch is deferred without a request until then.
                let held = try await adapter.send([try Self.push("b"), try Self.push("c")])
                #expect(
                    held.allSatisfy { if case .deferred(_, let after) = $0 { after > .zero && after <= .seconds(1) } else { false } },
                    "\(held)")
                #expect(requests().filter { $0["issued"] == nil }.count == 1)
            }
        }
    }

    @Test func aBadServiceAccountIsAClearErrorAtTheTokenEndpoint() async throws {
        try await withRedisServer { server in
            try await Self.withSimulator { fcm in
                let port = fcm.port
                // Signed by another key: Google's invalid_grant.
                let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                let object: [String: Any] = [
                    "type": "service_account", "project_id": "richpush-demo", "private_key_id": "k1",
                    "private_key": other.pkcs8PEMRepresentation, "client_email": "fcm@richpush-demo.iam.gserviceaccount.com",
                    "token_uri": LocalFCM.tokenURI(port: port),
                ]
                let account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: object)))
                let token = FCMAccessToken(
                    redis: RedisConnection(configuration: server.configuration), prefix: String(uniqueKeyPrefix("fcm").dropLast()),
                    account: account, http: fcm.http)
                await #expect { _ = try await token.current() } throws: { "\($0)".contains("invalid_grant: Invalid JWT Signature.") }
            }
        }
    }

    @Test func fcmSimRefusesWhatFCMRefuses() {
        func refused(_ json: String) -> String? {
            if case .failure(let error) = FCMMessageRules.check(Array(json.utf8)) { return error.message }
            return nil
        }
        #expect(refused(#"{"message":{"token":"t","data":{"a":"b"}}}"#) == nil)
        #expect(refused(#"{"message":{"token":"t","topic":"news"}}"#)?.contains("Exactly one") == true)
        #expect(refused(#"{"message":{"data":{"a":"b"}}}"#)?.contains("Exactly one") == true)
        #expect(refused(#"{"message":{"token":"t","data":{"a":1}}}"#)?.contains("TYPE_STRING") == true)
        #expect(refused(#"{"message":{"token":"t","data":{"from":"x"}}}"#)?.contains("Invalid data payload key") == true)
        #expect(refused(#"{"message":{"token":"t","data":{"google.x":"x"}}}"#)?.contains("Invalid data payload key") == true)
        #expect(refused(#"{"message":{"token":"t","android":{"ttl":"86400"}}}"#)?.contains("ttl") == true)
        #expect(refused(#"{"message":{"token":"t","android":{"ttl":"2419201s"}}}"#)?.contains("ttl") == true)
        #expect(refused(#"{"message":{"token":"t","android":{"priority":"URGENT"}}}"#)?.contains("priority") == true)
        #expect(refused(#"{"message":{"token":"t","android":{"priority":"high","ttl":"3.5s"}}}"#) == nil)
        #expect(refused(#"{"message":{"token":"t","unknown":1}}"#)?.contains("Unknown name") == true)
        #expect(refused(#"{"message":{"token":"t","data":{"k":"\#(String(repeating: "x", count: 4100))"}}}"#)?.contains("too big") == true)
        #expect(refused("not json")?.contains("Invalid JSON") == true)
        #expect(refused(#"{"message":{"token":"t","notification":{"title":"a","body":"b","image":"https://x/y.png"}}}"#) == nil)
        #expect(refused(#"{"message":{"token":"t","notification":{"subtitle":"a"}}}"#)?.contains("Unknown name \"subtitle\"") == true)
        #expect(refused(#"{"message":{"token":"t","notification":{"title":1}}}"#)?.contains("TYPE_STRING") == true)
        #expect(
            refused(#"{"message":{"token":"t","android":{"notification":{"click_action":"x","badge":"1"}}}}"#)?.contains(
                "Unknown name \"badge\"") == true)
    }
}

extension LocalFCM {
    /// The adapter as a worker builds it, its access token shared through the Redis at `redis`.
    func adapter(redis: RedisConfiguration, prefix: String, account: FCMServiceAccount, localTTL: Duration = .seconds(5)) -> FCMPushAdapter
    {
        FCMPushAdapter(
            client: client, projectID: "richpush-demo",
            token: FCMAccessToken(
                redis: RedisConnection(configuration: redis), prefix: prefix, account: account, http: http,
                timeout: Self.timeout, localTTL: localTTL))
    }
}

extension FCMAdapterTests {
    /// Past a device's limit fcm-sim answers FCM's 429 with Retry-After and a QuotaFailure naming
    /// the device: that push waits, the other devices' pushes go on.
    @Test func theDeviceLimitIsFCMsQuotaExceeded() async throws {
        try await withRedisServer { server in
            try await Self.withSimulator({ $0.quota.devicePerMinute = 2 }) { fcm in
                let requests = fcm.requests
                let adapter = fcm.adapter(
                    redis: server.configuration, prefix: String(uniqueKeyPrefix("fcm").dropLast()),
                    account: try Self.account(port: fcm.port))
                // One at a time, so which of the three is refused is known.
                var outcomes: [PushOutcome] = []
                for id in 1...3 { outcomes += try await adapter.send([try Self.push("same-phone", id: id)]) }
                #expect(outcomes.prefix(2).allSatisfy { if case .sent = $0 { true } else { false } }, "\(outcomes)")
                // A device's own quota (its QuotaFailure names the device) defers that device's push only.
                guard case .deviceDeferred(let reason, let after) = outcomes.last else {
                    Issue.record("expected the third push deferred, got \(outcomes)")
                    return
                }
                #expect(reason.hasPrefix("QUOTA_EXCEEDED"))
                #expect(after >= .seconds(1) && after <= .seconds(60))
                #expect(requests().filter { $0["status"] as? Int == 429 }.count == 1)
                let other = try await adapter.send([try Self.push("another-phone")])
                #expect(other.count == 1 && { if case .sent = other[0] { true } else { false } }(), "\(other)")
            }
        }
    }
}

extension FCMAdapterTests {
    /// fcm-sim's injected 400 is FCM's INVALID_ARGUMENT, a failure for good; its delay holds the
    /// answer back without failing it.
    @Test func anInjected400FailsForGoodAndADelayOnlySlows() async throws {
        try await withRedisServer { server in
            try await Self.withSimulator({
                $0.transient = [(400, 1.0)]; $0.delayMilliseconds = 300...300
            }) { fcm in
                let adapter = fcm.adapter(
                    redis: server.configuration, prefix: String(uniqueKeyPrefix("fcm").dropLast()),
                    account: try Self.account(port: fcm.port))
                let started = ContinuousClock.now
                let outcomes = try await adapter.send([try Self.push("a")])
                #expect(ContinuousClock.now - started >= .milliseconds(600), "the token exchange and the send, each held 300 ms")
                #expect(outcomes == [.failed(reason: "INVALID_ARGUMENT: Request contains an invalid argument.", retryable: false)])
            }
        }
    }
}
