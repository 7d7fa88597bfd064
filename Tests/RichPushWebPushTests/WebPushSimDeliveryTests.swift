import Foundation
import RedisTestSupport
import RichPushWebPushSim
import Testing

/// What `webpush-sim` does with the pushes it accepts (RFC 8030 §5, §6): 201 with Location, the
/// message to the subscriber's WebSocket at once or kept until its TTL, Topic replacement, TTL 0,
/// the caps on what it keeps, and the faults it injects.
@Suite("WebPushSim delivery")
struct WebPushSimDeliveryTests {
    let sender = TestSender()

    @Test func aCorrectPushIsAcceptedAndDeliveredOverTheWebSocket() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe(applicationServerKey: sender.publicKey)
            #expect(subscription.endpoint == "\(sim.origin)/push/\(subscription.id)")
            #expect(sim.origin == "https://127.0.0.1:\(sim.port)")
            let socket = try await sim.connect(subscription)
            let body = TestSender.aes128gcmBody(plaintextBytes: 3993)
            #expect(body.count == 4096, "the largest body RFC 8291 §4 sends, and RFC 8030 §7.2 requires a service to take")
            let answer = try await sim.push(subscription, sender: sender, topic: "order-7", body: body) { $0.append(("urgency", "HIGH")) }
            #expect(answer.status == 201, "\(answer.json)")
            #expect(answer.version == .http2, "push services speak HTTP/2 to a client that offers it")
            #expect(answer.header("location")?.hasPrefix("\(sim.origin)/message/") == true)
            #expect(answer.header("ttl") == "60")
            let message = try #require(try await socket.waitForMessages(1).first)
            #expect(message.body == Data(body) && message.subscriptionId == subscription.id)
            #expect(message.ttl == 60 && message.urgency == "high" && message.topic == "order-7" && message.contentEncoding == "aes128gcm")
            #expect(answer.header("location")?.hasSuffix("/\(message.id)") == true)
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 0)
            let line = try #require(sim.logLines.first { $0.contains("\"event\":\"push\"") })
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(fields["status"] as? Int == 201 && fields["topic"] as? String == "order-7" && fields["ttl"] as? String == "60")
            #expect(
                fields["urgency"] as? String == "HIGH" && fields["sub"] as? String == "mailto:push@example.com"
                    && fields["bytes"] as? Int == 4096)
            await socket.close()
        }
    }

    @Test func aPushWithoutPayloadNeedsNoContentEncoding() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let answer = try await sim.push(subscription, sender: sender, body: []) { headers in
                headers.removeAll { $0.0 == "content-encoding" }
            }
            #expect(answer.status == 201, "\(answer.json)")
        }
    }

    @Test func aMessageForAnOfflineSubscriberIsKeptAndDeliveredOnConnect() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe(applicationServerKey: sender.publicKey)
            let first = TestSender.aes128gcmBody(plaintextBytes: 10), second = TestSender.aes128gcmBody(plaintextBytes: 20)
            #expect(try await sim.push(subscription, sender: sender, body: first).status == 201)
            #expect(try await sim.push(subscription, sender: sender, body: second).status == 201)
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 2)
            let socket = try await sim.connect(subscription)
            let messages = try await socket.waitForMessages(2)
            #expect(messages.map(\.body) == [Data(first), Data(second)], "kept messages arrive in order")
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 0)
            await socket.close()
        }
    }

    @Test func aNewerMessageWithTheSameTopicReplacesTheKeptOne() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let old = TestSender.aes128gcmBody(plaintextBytes: 10), other = TestSender.aes128gcmBody(plaintextBytes: 11)
            let new = TestSender.aes128gcmBody(plaintextBytes: 12)
            #expect(try await sim.push(subscription, sender: sender, topic: "score", body: old).status == 201)
            #expect(try await sim.push(subscription, sender: sender, topic: "weather", body: other).status == 201)
            #expect(try await sim.push(subscription, sender: sender, topic: "score", body: new).status == 201)
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 2)
            let socket = try await sim.connect(subscription)
            let marker = TestSender.aes128gcmBody(plaintextBytes: 1)
            #expect(try await sim.push(subscription, sender: sender, body: marker).status == 201)
            let messages = try await socket.waitForMessages(3)
            #expect(messages.map(\.body) == [Data(other), Data(new), Data(marker)])
            #expect(sim.logLines.contains { $0.contains("\"outcome\":\"replaced\"") })
            await socket.close()
        }
    }

    @Test func aKeptMessageIsDroppedWhenItsTTLRunsOut() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let short = TestSender.aes128gcmBody(plaintextBytes: 10), long = TestSender.aes128gcmBody(plaintextBytes: 11)
            #expect(try await sim.push(subscription, sender: sender, ttl: "30", body: short).status == 201)
            #expect(try await sim.push(subscription, sender: sender, ttl: "3600", body: long).status == 201)
            sim.clock.advance(seconds: 31)
            let socket = try await sim.connect(subscription)
            let marker = TestSender.aes128gcmBody(plaintextBytes: 1)
            #expect(try await sim.push(subscription, sender: sender, body: marker).status == 201)
            #expect(try await socket.waitForMessages(2).map(\.body) == [Data(long), Data(marker)])
            await socket.close()
        }
    }

    @Test func ttl0IsDeliveredToAConnectedSubscriberAndDroppedForAnOfflineOne() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let dropped = TestSender.aes128gcmBody(plaintextBytes: 10)
            #expect(
                try await sim.push(subscription, sender: sender, ttl: "0", body: dropped).status == 201,
                "RFC 8030 §5.2: accepted, then dropped")
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 0)
            let socket = try await sim.connect(subscription)
            let now = TestSender.aes128gcmBody(plaintextBytes: 11)
            #expect(try await sim.push(subscription, sender: sender, ttl: "0", body: now).status == 201)
            #expect(try await socket.waitForMessages(1).map(\.body) == [Data(now)])
            #expect(sim.logLines.contains { $0.contains("\"outcome\":\"dropped_ttl0\"") })
            await socket.close()
        }
    }

    @Test func aTTLLongerThanTheServiceKeepsIsCutAndTheAnswerSaysSo() async throws {
        try await WebPushSimHarness.with({ $0.maxTTL = 86400 }) { sim in
            let subscription = try await sim.subscribe()
            let answer = try await sim.push(subscription, sender: sender, ttl: "99999999999999999999999")
            #expect(answer.status == 201 && answer.header("ttl") == "86400", "RFC 8030 §5.2")
        }
    }

    @Test func theOldestKeptMessageGoesWhenASubscriptionsQueueIsFull() async throws {
        try await WebPushSimHarness.with({
            $0.keptPerSubscription = 2; $0.keptTotal = 3
        }) { sim in
            let subscription = try await sim.subscribe()
            let bodies = (1...3).map { TestSender.aes128gcmBody(plaintextBytes: $0) }
            for body in bodies { #expect(try await sim.push(subscription, sender: sender, body: body).status == 201) }
            #expect(sim.simulator.keptCount(subscriptionID: subscription.id) == 2)
            let other = try await sim.subscribe()
            #expect(try await sim.push(other, sender: sender).status == 201)
            let full = try await sim.push(other, sender: sender)
            #expect(full.status == 503 && full.reason == "storage_full" && full.header("retry-after") != nil, "the total cap: 3")
            let socket = try await sim.connect(subscription)
            #expect(try await socket.waitForMessages(2).map(\.body) == bodies.suffix(2).map { Data($0) })
            await socket.close()
        }
    }

    @Test func injectedFaults410And429And503() async throws {
        try await WebPushSimHarness.with({ $0.gone = 1 }) { sim in
            let subscription = try await sim.subscribe()
            let answer = try await sim.push(subscription, sender: sender)
            #expect(answer.status == 410 && answer.reason == "expired_subscription")
            #expect(try await sim.push(subscription, sender: sender).status == 410, "a gone subscription stays gone")
        }
        for status in [429, 503] {
            try await WebPushSimHarness.with({ $0.transient = [(status, 1)] }) { sim in
                let subscription = try await sim.subscribe()
                let answer = try await sim.push(subscription, sender: sender)
                #expect(answer.status == status && answer.reason == "injected_fault" && answer.header("retry-after") == "1")
                #expect(
                    try await sim.push(subscription, sender: sender, ttl: nil).status == 400,
                    "a bad request is refused as bad, not as a fault")
            }
        }
    }

    @Test func aNewConnectionReplacesTheOldOne() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let first = try await sim.connect(subscription)
            let second = try await sim.connect(subscription)
            try await waitUntil(timeout: .seconds(30), "the replaced socket to close") { first.isClosed }
            #expect(try await sim.push(subscription, sender: sender).status == 201)
            #expect(try await second.waitForMessages(1).count == 1)
            await second.close()
            try await waitUntil(timeout: .seconds(30), "the simulator to see the subscriber go") {
                !sim.simulator.isConnected(subscriptionID: subscription.id)
            }
        }
    }
}
