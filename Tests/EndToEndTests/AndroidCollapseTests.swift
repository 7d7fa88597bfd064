import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushQueue
import RichPushSimTLS
import RichPushSimulator
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing
import _CryptoExtras

/// FCM's collapse semantics for an Android phone that was offline: every notification sent
/// without a collapse id, and the newest of each collapse id, at most 4 keys (past them the
/// oldest key is dropped). Through a worker and the simulated hub, and through fcm-sim.
@Suite("Android collapse keys")
struct AndroidCollapseTests {
    /// What one offline round sends (a collapse id or none, in order) and what the phone must
    /// get when it is back: every push without one, and per kept key its newest.
    struct Round {
        let collapse: [String?]
        /// Positions in `collapse` of the pushes the phone gets.
        let kept: Set<Int>
        /// Positions of the pushes dropped for a fifth key (the hub reports them expired).
        let dropped: Set<Int>
    }

    /// Four keys, replaced within them: nothing is lost but what a newer push replaced.
    static let fourKeys = Round(collapse: [nil, "a", nil, "b", "a", "c", nil, "d", "b"], kept: [0, 2, 6, 4, 8, 5, 7], dropped: [])
    /// Six keys: the two the hub took first are dropped; the push without one still arrives.
    static let sixKeys = Round(collapse: ["k1", "k2", "k3", nil, "k4", "k5", "k6"], kept: [3, 2, 4, 5, 6], dropped: [0, 1])

    /// The richIds a device's hold would hand over now (the pushes that have not expired).
    static func held(_ pipeline: Pipeline, handle: String) async throws -> Set<String> {
        let values =
            try await pipeline.redis.send("HVALS", OfflineStore(prefix: pipeline.prefix).key(handle)).array?.compactMap(\.bytes) ?? []
        let now = JobQueue.nowMilliseconds()
        return Set(
            values.compactMap { value -> String? in
                guard let bar = value.firstIndex(of: UInt8(ascii: "|")), let at = Int64(String(decoding: value[..<bar], as: UTF8.self)),
                    at > now,
                    let envelope = JSONValue.parse(Array(value[(bar + 1)...]))
                else { return nil }
                return envelope["payload"]?["data"]?["richId"]?.string
            })
    }

    /// The phone comes back and reports what it received; it must be `expected`, once each.
    static func comeBack(_ pipeline: Pipeline, handlePrefix: String, expecting expected: Set<String>) async throws {
        let again = try pipeline.simulator(tap: .none, handlePrefix: handlePrefix, platforms: .fcm, fetchPayload: false)
        try await withSimulator(again) { log in
            try await waitUntil(timeout: .seconds(60), "the \(expected.count) held pushes") { log.count("received") >= expected.count }
            let received = log.all.filter { $0.event == "received" }.compactMap(\.richId)
            #expect(
                Set(received) == expected && received.count == expected.count,
                "received \(received.sorted()), expected \(expected.sorted())")
        }
        #expect(try await held(pipeline, handle: again.configuration.handle(of: 0)).isEmpty, "everything live was handed over")
    }

    /// Through a worker and the simulated hub, as in demos: the worker renders the FCM message
    /// (no collapse key unless the sender gave one) and the hub holds it as FCM does.
    @Test func anOfflineAndroidPhoneGetsEveryPlainPushAndTheNewestOfFourKeysThroughTheHub() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let phone = try pipeline.simulator(tap: .none, handlePrefix: "away", platforms: .fcm, fetchPayload: false)
                let handle = phone.configuration.handle(of: 0)
                try await phone.start()
                await phone.stop()
                let sweeper = HubExpirySweeper(
                    redis: pipeline.redis, prefix: pipeline.prefix,
                    ledger: RedisDeliveryLedger(redis: pipeline.redis, keys: pipeline.keys, retention: .seconds(3600)))
                for round in [Self.fourKeys, Self.sixKeys] {
                    var ids: [Int] = []
                    try await withWorker(pipeline.worker()) {
                        // One at a time, so the hub takes them in this order.
                        for collapse in round.collapse {
                            var json: [String: Any] = ["message": "m", "richType": "text", "payload": "p"]
                            if let collapse { json["collapseId"] = collapse }
                            let id = try await pipeline.send(json: json)
                            ids.append(id)
                            try await waitUntil(timeout: .seconds(60), "push \(id) to be held") {
                                (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                            }
                        }
                    }
                    let expected = Set(round.kept.map { String(ids[$0]) })
                    #expect(try await Self.held(pipeline, handle: handle) == expected)
                    try await Self.comeBack(pipeline, handlePrefix: "away", expecting: expected)
                    // A key dropped for a fifth is no silent loss: its push is counted expired.
                    try await sweeper.sweep()
                    for position in round.dropped {
                        #expect((try await pipeline.status(ids[position])["counts"] as? [String: Int])?["expired"] == 1, "push \(position)")
                    }
                }
            }
        }
    }

    /// Through fcm-sim: what the FCM adapter sends (a v1 message, with `collapse_key` only when
    /// the sender gave a collapse id) is accepted and held for the offline phone as FCM holds it.
    @Test func fcmSimHoldsAnOfflinePhonesMessagesAsFCMDoes() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let account = try FCMServiceAccount(
            json: Array(
                try JSONSerialization.data(withJSONObject: [
                    "type": "service_account", "project_id": "richpush-demo", "private_key_id": "k1",
                    "private_key": key.pkcs8PEMRepresentation,
                    "client_email": "fcm@richpush-demo.iam.gserviceaccount.com", "token_uri": "https://127.0.0.1/token",
                ])))
        let accepted = Mutex<[FCMSimulator.Accepted]>([])
        let simulator = FCMSimulator(
            configuration: FCMSimulator.Configuration(
                projectID: "richpush-demo",
                check: try FCMAssertionCheck(
                    clientEmail: account.clientEmail, keyID: "k1", publicKeyPEM: key.publicKey.pemRepresentation,
                    audiences: [account.tokenURI])),
            forward: { message in accepted.withLock { $0.append(message) } })
        let exchange = simulator.respond(
            to: LocalHTTP2Server.Request(
                method: "POST", path: "/token", headers: [],
                body: Array(
                    "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=\(try account.assertion(issuedAt: Date()))".utf8)))
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(exchange.body)) as? [String: Any])?["access_token"] as? String,
            "\(String(decoding: exchange.body, as: UTF8.self))")
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let phone = try pipeline.simulator(tap: .none, handlePrefix: "fcm-away", platforms: .fcm, fetchPayload: false)
                let handle = phone.configuration.handle(of: 0)
                try await phone.start()
                await phone.stop()
                // What the fcm-sim command's forwarder does with each accepted message.
                let hub = SimulatedHubAdapter(redis: pipeline.redis, prefix: pipeline.prefix)
                var next = 900_000
                for round in [Self.fourKeys, Self.sixKeys] {
                    var ids: [Int] = []
                    for collapse in round.collapse {
                        next += 1
                        ids.append(next)
                        let notification = RichNotification(
                            id: next, message: "m", richType: .text, contentType: "text/plain", payloadHash: "h",
                            payloadSize: 1, creator: "alice", target: "username:alice",
                            createdAt: JobQueue.nowMilliseconds(), delivery: DeliveryOptions(collapseID: collapse))
                        let body = try FCMMessage(rest: try PushRenderer().renderFCM(notification, collapseID: String(next)).payload).body(
                            token: handle)
                        let answer = simulator.respond(
                            to: LocalHTTP2Server.Request(
                                method: "POST", path: "/v1/projects/richpush-demo/messages:send",
                                headers: [(name: "authorization", value: "Bearer \(token)")], body: body))
                        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
                        let message = try #require(accepted.withLock { $0.popLast() })
                        let outcomes = try await hub.send([message.hubPush])
                        guard case .held = outcomes.first else {
                            Issue.record("the phone is offline, yet: \(outcomes)")
                            return
                        }
                    }
                    let expected = Set(round.kept.map { String(ids[$0]) })
                    #expect(try await Self.held(pipeline, handle: handle) == expected)
                    try await Self.comeBack(pipeline, handlePrefix: "fcm-away", expecting: expected)
                }
            }
        }
    }
}
