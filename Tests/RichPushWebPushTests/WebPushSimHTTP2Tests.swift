import AsyncHTTPClient
import Testing

/// `webpush-sim --http2-frames` serves HTTP/2 on the connection's frames (``PushServiceHTTP2Handler``), so what a
/// stream channel did for it is its own to get right: flow control past the first 64 KB of a
/// connection and of a stream, an answer held back without holding the others, and the same
/// answers as over HTTP/1.1.
@Suite("WebPushSim over HTTP/2")
struct WebPushSimHTTP2Tests {
    @Test func aBodyFarPastTheLimitAndTheStreamWindowIs413() async throws {
        try await WebPushSimHarness.with({ $0.http2Frames = true }) { sim in
            let subscription = try await sim.subscribe()
            // 200 KB: three times a stream's initial window, so the sender needs the window given back.
            let answer = try await sim.push(subscription, sender: TestSender(), body: [UInt8](repeating: 7, count: 200_000))
            #expect(answer.version == .http2)
            #expect(answer.status == 413 && answer.reason == "payload_too_large", "\(answer.json)")
            // The connection goes on: the next push is taken.
            let next = try await sim.push(subscription, sender: TestSender())
            #expect(next.status == 201 && next.version == .http2)
        }
    }

    @Test func pushesPastTheConnectionsFirstWindowAreAllTaken() async throws {
        try await WebPushSimHarness.with({ $0.http2Frames = true }) { sim in
            let subscription = try await sim.subscribe()
            let sender = TestSender()
            // 40 × ~4 KB on one connection: more than twice the 64 KB a connection starts with.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        try await sim.push(subscription, sender: sender, body: TestSender.aes128gcmBody(plaintextBytes: 3900)).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 201, count: 40))
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 40)
        }
    }

    @Test func aDelayedAnswerHoldsOnlyItsOwnStream() async throws {
        try await WebPushSimHarness.with({
            $0.delayMilliseconds = 300...300; $0.http2Frames = true
        }) { sim in
            let subscription = try await sim.subscribe()
            let answers = try await withThrowingTaskGroup(of: WebPushSimHarness.Answer.self) { group in
                for _ in 0..<5 { group.addTask { try await sim.push(subscription, sender: TestSender()) } }
                return try await group.reduce(into: [WebPushSimHarness.Answer]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 201 && $0.version == .http2 && $0.header("location") != nil })
        }
    }

    @Test func theSubscribersSideAndItsCORSAnswerAsOverHummingbird() async throws {
        let page = "http://127.0.0.1:8080"
        try await WebPushSimHarness.with({ $0.http2Frames = true }) { sim in
            let preflight = try await sim.send(
                .OPTIONS, "https://127.0.0.1:\(sim.port)/subscribe",
                headers: [
                    ("origin", page), ("access-control-request-method", "POST"),
                ])
            #expect(preflight.status == 204 && preflight.version == .http2 && preflight.header("access-control-allow-methods") == "POST")
            let subscribed = try await sim.send(
                .POST, "https://127.0.0.1:\(sim.port)/subscribe", headers: [("origin", page)], body: Array("{}".utf8))
            #expect(
                subscribed.status == 201 && subscribed.header("access-control-allow-origin") == "*"
                    && subscribed.json["subscriptionId"] != nil)
            let refused = try await sim.push(
                WebPushSimHarness.Subscription(endpoint: subscribed.json["endpoint"] ?? "", id: "", webSocket: ""), sender: TestSender(),
                ttl: nil)
            #expect(refused.status == 400 && refused.reason == "missing_ttl", "\(refused.json)")
        }
    }

    @Test func anUnknownPathIs404AndAWebSocketURLIs426() async throws {
        try await WebPushSimHarness.with({ $0.http2Frames = true }) { sim in
            let subscription = try await sim.subscribe()
            let unknown = try await sim.send(.GET, "https://127.0.0.1:\(sim.port)/nothing/here")
            #expect(unknown.status == 404 && unknown.version == .http2)
            let wrongMethod = try await sim.send(.GET, subscription.endpoint)
            #expect(wrongMethod.status == 404)
            let webSocket = try await sim.send(.GET, "https://127.0.0.1:\(sim.port)/subscription/\(subscription.id)/ws")
            // Over HTTP/1.1 the 426 names `Upgrade: websocket`; HTTP/2 has no such field (RFC 9113 §8.2.2).
            #expect(webSocket.status == 426 && webSocket.header("upgrade") == nil)
        }
    }
}
