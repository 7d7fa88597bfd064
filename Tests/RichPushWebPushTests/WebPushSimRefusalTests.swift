import Crypto
import Foundation
import RichPushWebPushSim
import Testing

/// Each thing RFC 8030, 8291 and 8292 refuse, refused by `webpush-sim` with the status a push
/// service uses, over real HTTP/2 with TLS: one request wrong in one way per test, the rest right.
@Suite("WebPushSim refusals")
struct WebPushSimRefusalTests {
    let sender = TestSender()

    /// Sends a push to a fresh subscription (restricted to the sender's key) with `change`
    /// applied, and expects `status`, `reason` and `errno`.
    func expectRefusal(
        _ status: Int, _ reason: String, errno: Int?, ttl: String? = "60", topic: String? = nil, body: [UInt8]? = nil,
        restrictedTo key: P256.Signing.PublicKey? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        change: @escaping @Sendable (inout [(String, String)], WebPushSimHarness) -> Void = { _, _ in }
    ) async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe(applicationServerKey: key ?? sender.publicKey)
            let answer = try await sim.push(subscription, sender: sender, ttl: ttl, topic: topic, body: body) { change(&$0, sim) }
            #expect(answer.status == status, "\(answer.json)", sourceLocation: sourceLocation)
            #expect(answer.reason == reason, sourceLocation: sourceLocation)
            #expect(answer.json["errno"] == errno.map(String.init) ?? "<null>", sourceLocation: sourceLocation)
            #expect(answer.header("content-type") == "application/json", sourceLocation: sourceLocation)
            #expect(
                sim.simulator.keptCount(subscriptionID: subscription.id) == 0, "a refused message is not kept",
                sourceLocation: sourceLocation)
        }
    }

    static func replace(_ name: String, with value: String?, in headers: inout [(String, String)]) {
        headers.removeAll { $0.0 == name }
        if let value { headers.append((name, value)) }
    }

    // RFC 8030 §5.2, §5.3, §5.4

    @Test func noTTLIs400() async throws {
        try await expectRefusal(400, "missing_ttl", errno: 111, ttl: nil)
    }

    @Test(arguments: ["-1", "ten", "1.5", ""])
    func aTTLThatIsNotDeltaSecondsIs400(ttl: String) async throws {
        try await expectRefusal(400, "invalid_ttl", errno: 112, ttl: ttl)
    }

    @Test func anUnknownUrgencyIs400() async throws {
        try await expectRefusal(400, "invalid_urgency", errno: nil) { headers, _ in headers.append(("urgency", "urgent")) }
    }

    @Test func aTopicOf33CharactersIs400() async throws {
        try await expectRefusal(400, "invalid_topic", errno: 113, topic: String(repeating: "a", count: 33))
    }

    @Test func aTopicOutsideTheURLSafeBase64AlphabetIs400() async throws {
        try await expectRefusal(400, "invalid_topic", errno: 113, topic: "news+sport")
    }

    // RFC 8291 §4, RFC 8188 §2

    @Test func aContentEncodingOtherThanAes128gcmIs400() async throws {
        try await expectRefusal(400, "invalid_content_encoding", errno: 110) { headers, _ in
            Self.replace("content-encoding", with: "aesgcm", in: &headers)
        }
    }

    @Test func aBodyWithoutContentEncodingIs400() async throws {
        try await expectRefusal(400, "invalid_content_encoding", errno: 110) { headers, _ in
            Self.replace("content-encoding", with: nil, in: &headers)
        }
    }

    @Test func aBodyOf4097BytesIs413() async throws {
        let body = TestSender.aes128gcmBody(plaintextBytes: 3994)
        #expect(body.count == 4097)
        try await expectRefusal(413, "payload_too_large", errno: 104, body: body)
    }

    @Test func aKeyidThatIsNotAnECDHKeyIs400() async throws {
        var body = TestSender.aes128gcmBody(plaintextBytes: 10)
        body[20] = 16
        try await expectRefusal(400, "invalid_aes128gcm_header", errno: 110, body: body)
        body = TestSender.aes128gcmBody(plaintextBytes: 10)
        body[21] = 2
        try await expectRefusal(400, "invalid_aes128gcm_header", errno: 110, body: body)
    }

    @Test func moreThanOneRecordIs400() async throws {
        try await expectRefusal(400, "invalid_aes128gcm_header", errno: 110, body: TestSender.aes128gcmBody(plaintextBytes: 200, rs: 100))
    }

    @Test func aBodyCutShortIs400() async throws {
        try await expectRefusal(
            400, "invalid_aes128gcm_header", errno: 110, body: Array(TestSender.aes128gcmBody(plaintextBytes: 0).prefix(90)))
    }

    // RFC 8292 §2, §3, §4.2

    @Test func noAuthorizationIs401() async throws {
        try await expectRefusal(401, "vapid_missing", errno: 109) { headers, _ in Self.replace("authorization", with: nil, in: &headers) }
    }

    @Test func theDraftWebPushSchemeIs401() async throws {
        try await expectRefusal(401, "vapid_invalid", errno: 109) { headers, sim in
            let token = sender.jwt(.init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 3600))
            Self.replace("authorization", with: "WebPush \(token)", in: &headers)
        }
    }

    @Test func aJWTSignedByAnotherKeyIs401() async throws {
        try await expectRefusal(401, "vapid_bad_signature", errno: 109) { headers, sim in
            let token = sender.jwt(
                .init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 3600), signer: P256.Signing.PrivateKey())
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test func anAlgOtherThanES256Is401() async throws {
        try await expectRefusal(401, "vapid_invalid", errno: 109) { headers, sim in
            let token = sender.jwt(.init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 3600), alg: "HS256")
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test(arguments: ["https://push.example.net", "https://localhost", "http://127.0.0.1", "ORIGIN/"])
    func aWrongAudIs401(aud: String) async throws {
        try await expectRefusal(401, "vapid_wrong_aud", errno: 109) { headers, sim in
            let audience = aud.replacingOccurrences(of: "ORIGIN", with: sim.origin)
            let token = sender.jwt(.init(aud: audience, exp: sim.clock.now().timeIntervalSince1970 + 3600))
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test func anExpiredJWTIs401() async throws {
        try await expectRefusal(401, "vapid_bad_exp", errno: 109) { headers, sim in
            let token = sender.jwt(.init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 - 60))
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test func anExpMoreThan24HoursAheadIs401() async throws {
        try await expectRefusal(401, "vapid_bad_exp", errno: 109) { headers, sim in
            let token = sender.jwt(.init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 86400 + 120))
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test func noExpIs401() async throws {
        try await expectRefusal(401, "vapid_bad_exp", errno: 109) { headers, sim in
            Self.replace("authorization", with: sender.authorization(token: sender.jwt(.init(aud: sim.origin, exp: nil))), in: &headers)
        }
    }

    @Test(arguments: [nil, "push@example.com", "http://example.com/contact"] as [String?])
    func aSubThatIsNotMailtoOrHttpsIs401(sub: String?) async throws {
        try await expectRefusal(401, "vapid_bad_sub", errno: 109) { headers, sim in
            let token = sender.jwt(.init(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 3600, sub: sub))
            Self.replace("authorization", with: sender.authorization(token: token), in: &headers)
        }
    }

    @Test func aKeyOtherThanTheSubscriptionsApplicationServerKeyIs403() async throws {
        // A valid JWT, signed by k: but k is not the key the subscription was made with.
        try await expectRefusal(403, "vapid_key_mismatch", errno: 109, restrictedTo: P256.Signing.PrivateKey().publicKey)
    }

    // RFC 8030 §7.3 (and autopush's 404 for an endpoint it never issued)

    @Test func anExpiredSubscriptionIs410AndAnUnknownOne404() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe(applicationServerKey: sender.publicKey)
            #expect(try await sim.send(.DELETE, "https://127.0.0.1:\(sim.port)/subscription/\(subscription.id)").status == 204)
            let gone = try await sim.push(subscription, sender: sender)
            #expect(gone.status == 410 && gone.reason == "expired_subscription" && gone.json["errno"] == "103")
            let unknown = try await sim.push(
                .init(endpoint: "\(sim.origin)/push/nosuchsubscription", id: "x", webSocket: ""), sender: sender)
            #expect(unknown.status == 404 && unknown.reason == "unknown_subscription" && unknown.json["errno"] == "102")
            #expect(try await sim.send(.DELETE, "https://127.0.0.1:\(sim.port)/subscription/nosuchsubscription").status == 404)
            #expect(try await sim.send(.GET, "https://127.0.0.1:\(sim.port)/subscription/\(subscription.id)/ws").status == 410)
        }
    }

    @Test func aSubscribeWithAKeyThatIsNotAP256PointIs400() async throws {
        try await WebPushSimHarness.with { sim in
            let answer = try await sim.send(
                .POST, "https://127.0.0.1:\(sim.port)/subscribe", body: Array("{\"applicationServerKey\":\"AAAA\"}".utf8))
            #expect(answer.status == 400 && answer.reason == "invalid_subscribe_request")
        }
    }
}
