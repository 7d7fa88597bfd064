import Foundation
import NIOCore
import NIOPosix
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import RichPushHTTP2
import Testing

/// The HTTP/2 client against apns-sim over TLS: Apple's HPACK advice, the stream limit as it
/// changes, GOAWAY, and a server that never answers.
@Suite("APNs HTTP/2 client")
struct APNSClientTests {
    @Test func pathAndAuthorizationAreLiteralsWithoutIndexing() async throws {
        let apns = try await LocalAPNS.start()
        let bearer = try LocalAPNS.bearer()
        for index in 0..<5 {
            let exchange = await apns.client.send(try LocalAPNS.request(token: LocalAPNS.token(index), notification: index), bearer: bearer)
            guard case .answered(200, _, _, _) = exchange else {
                Issue.record("push \(index): \(exchange)")
                break
            }
        }
        let requests = apns.requests
        #expect(requests.count == 5)
        #expect(requests.allSatisfy { ($0["indexed"] as? [String]) == [] }, "\(requests)")
        try await apns.stop()
    }

    @Test func theStreamLimitRisesAfterAValidTokenFallsAfterARefusalAndIsHonoured() async throws {
        let apns = try await LocalAPNS.start(maxStreams: 8, connections: 1)
        let bearer = try LocalAPNS.bearer()
        // 50 at once on a new connection: one stream until the first push succeeds, then 8.
        let exchanges = await withTaskGroup(of: HTTP2Exchange.self) { group in
            for index in 0..<50 {
                group.addTask {
                    await apns.client.send(try! LocalAPNS.request(token: LocalAPNS.token(index), notification: index), bearer: bearer)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(exchanges.allSatisfy { if case .answered(200, _, _, _) = $0 { true } else { false } }, "\(exchanges)")
        // Never more streams than allowed: no stream was refused. (A connection that a busy machine
        // let time out before its first write has its requests sent again on the next: not a refusal.)
        #expect(apns.client.streamsRefused == 0)
        #expect(apns.requests.count == 50, "each push reached the server once")
        #expect(apns.client.streamLimits == [[1, 8]])
        // A refused push (a topic the team may not use) brings it back to one; the next good push raises it.
        let refused = await apns.client.send(try LocalAPNS.request(token: LocalAPNS.token(99), topic: "com.example.other"), bearer: bearer)
        #expect(
            refused
                == .answered(
                    status: 400, responseID: APNSID.make(notification: 42, installation: "inst-00000063"), retryAfter: nil,
                    body: Array(#"{"reason":"TopicDisallowed"}"#.utf8)))
        _ = await apns.client.send(try LocalAPNS.request(token: LocalAPNS.token(100)), bearer: bearer)
        // The SETTINGS frame may land just after the answer.
        try await waitUntil(timeout: .seconds(60), "the limit to be raised again") { apns.client.streamLimits == [[1, 8, 1, 8]] }
        try await apns.stop()
    }

    @Test func goAwayMidwayLosesNothingAndSendsNothingTwice() async throws {
        var faults = APNSFaultPlan()
        faults.goAwayEvery = 150
        let apns = try await LocalAPNS.start(maxStreams: 50, faults: faults)
        let bearer = try LocalAPNS.bearer()
        let pushes = (0..<1000).map { LocalAPNS.push(token: LocalAPNS.token($0), notification: $0) }
        let exchanges = await withTaskGroup(of: HTTP2Exchange.self) { group in
            for push in pushes {
                group.addTask { await apns.client.send(try! APNSRequest(push: push, topic: LocalAPNS.topic), bearer: bearer) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let answered = exchanges.filter { if case .answered(200, _, _, _) = $0 { true } else { false } }.count
        let others = exchanges.filter { if case .answered(200, _, _, _) = $0 { false } else { true } }
        #expect(
            answered == 1000,
            "\(others.prefix(3)) \(Dictionary(grouping: others.map { "\($0)".prefix(60) }, by: { $0 }).mapValues(\.count))")
        // The simulator processed each push exactly once. A connection answers at most 150 + 50 (the
        // streams open when its GOAWAY went out), so 1,000 took at least five.
        let paths = apns.requests.compactMap { $0["path"] as? String }
        #expect(paths.count == 1000 && Set(paths).count == 1000)
        #expect(apns.client.connectionsOpened >= 5)
        #expect(apns.client.requestsResent > 0, "GOAWAY refused no stream: the test did not test it")
        try await apns.stop()
    }

    @Test func aServerThatNeverSpeaksHTTP2IsGivenUpOnWithoutSendingAnything() async throws {
        // Accepts TCP connections and never says a word, not even TLS.
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let client = try HTTP2Client(
            configuration: HTTP2Client.Configuration(
                endpoint: HTTP2Client.Endpoint(host: "localhost", port: silent.localAddress?.port ?? 0, usesTLS: true),
                // 3 s for the connect and the SETTINGS together: the TCP connect on loopback must end
                // within it even on a busy machine (300 ms once timed out the connect itself, at load 22).
                connections: 1, requestTimeout: .milliseconds(300), connectTimeout: .seconds(3), minReconnectDelay: .seconds(30)))
        let started = ContinuousClock.now
        let first = await client.send(try LocalAPNS.request(token: LocalAPNS.token(1)), bearer: "x")
        guard case .unprocessed(let reason) = first else {
            Issue.record("expected nothing sent, got \(first)")
            return
        }
        #expect(reason.contains("no HTTP/2 SETTINGS"), "\(reason)")
        // Given up, not hung: bounded by the timeouts, with a busy machine's slack (a full
        // suite beside a build once took 11.5 s here; the bound is not a speed target).
        #expect(ContinuousClock.now - started < .seconds(60))
        // Then it backs off instead of trying again at once.
        let second = await client.send(try LocalAPNS.request(token: LocalAPNS.token(2)), bearer: "x")
        guard case .unprocessed(let again) = second else {
            Issue.record("expected nothing sent, got \(second)")
            return
        }
        #expect(again.contains("next attempt in"), "\(again)")
        #expect(client.connectionsOpened == 0)
        client.shutdown()
        try await silent.close()
    }

    @Test func aSlowAnswerTimesOutWithoutClosingTheConnection() async throws {
        var faults = APNSFaultPlan()
        // The answer comes long after the client's timeout; that timeout (2 s) also covers the
        // connection's TLS handshake, which a busy machine stretched past 300 ms (a second
        // connection was then opened, and counted).
        faults.delayMilliseconds = 10_000...10_000
        // A liveness PING waits 60 s for its answer here: on a busy machine (the whole suite in
        // parallel) a 2 s one, the request timeout's default, was once outlasted by a stall and
        // the live connection closed (HTTP2LivenessTests has the unanswered PING).
        let apns = try await LocalAPNS.start(faults: faults, timeout: .seconds(2), connections: 1, pingTimeout: .seconds(60))
        let exchange = await apns.client.send(try LocalAPNS.request(token: LocalAPNS.token(1)), bearer: try LocalAPNS.bearer())
        #expect(exchange == .timedOut)
        // The connection said nothing since the request began (the answer is 10 s away), so the
        // client PINGed it; apns-sim answered, and the connection stays (HTTP2LivenessTests has
        // the server that does not answer).
        #expect(apns.client.connectionsOpened == 1)
        try await apns.stop()
    }

    @Test func endpointsAreParsedAndCleartextNeedsConsent() throws {
        #expect(try HTTP2Client.Endpoint(apns: "production") == HTTP2Client.Endpoint(host: "api.push.apple.com", port: 443, usesTLS: true))
        #expect(
            try HTTP2Client.Endpoint(apns: "sandbox") == HTTP2Client.Endpoint(host: "api.sandbox.push.apple.com", port: 443, usesTLS: true))
        #expect(
            try HTTP2Client.Endpoint(apns: "https://127.0.0.1:2197") == HTTP2Client.Endpoint(host: "127.0.0.1", port: 2197, usesTLS: true))
        #expect(try HTTP2Client.Endpoint(apns: "https://[::1]:2197/") == HTTP2Client.Endpoint(host: "::1", port: 2197, usesTLS: true))
        #expect(throws: APNSConfigurationError.self) { try HTTP2Client.Endpoint(apns: "http://localhost:2197") }
        #expect(
            try HTTP2Client.Endpoint(apns: "http://localhost:2197", allowCleartext: true)
                == HTTP2Client.Endpoint(host: "localhost", port: 2197, usesTLS: false))
        for bad in ["ftp://x", "https://", "https://host:0", "https://host:99999", "https://host:port"] {
            #expect(throws: APNSConfigurationError.self, "\(bad)") { try HTTP2Client.Endpoint(apns: bad) }
        }
    }
}
