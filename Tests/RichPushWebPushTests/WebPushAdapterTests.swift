import Crypto
import Foundation
import NIOSSL
import RedisTestSupport
import RichPushCore
import Testing

@testable import RichPushWebPush

/// The worker's Web Push adapter against `webpush-sim` over TLS: each message encrypted to its
/// own device (which decrypts it), one VAPID token per origin, and every answer of the push
/// service leading to its documented action.
@Suite("Web Push adapter against webpush-sim", .serialized)
struct WebPushAdapterTests {
    /// A browser: its ECDH key and auth secret, registered as an installation of alice.
    struct Browser {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }

        func installation(_ endpoint: String, id: String = "web-\(UUID().uuidString.prefix(6))") -> Installation {
            Installation(
                id: id, platform: .webpush, handle: endpoint, tags: ["username:alice"], owner: "alice", updatedAt: 0,
                webPushKeys: WebPushKeys(p256dh: Base64URL.encode(key.publicKey.x963Representation), auth: Base64URL.encode(auth)))
        }

        func decrypt(_ body: Data) throws -> [UInt8] {
            try WebPushEncryption.decrypt(Array(body), receiverPrivateKey: key, auth: auth)
        }
    }

    /// The application server's VAPID key (kept as bytes: swift-crypto's key is not Sendable).
    static let vapidRaw = P256.Signing.PrivateKey().rawRepresentation
    static var vapidKey: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: vapidRaw) }

    static func signer() throws -> VAPIDSigner {
        try VAPIDSigner(privateKey: Base64URL.encode(vapidKey.rawRepresentation), subject: "mailto:ops@example.com")
    }

    /// How the adapter reaches the push service: AsyncHTTPClient (HTTP/1.1 or HTTP/2, as it
    /// negotiates), or our HTTP/2 client, one per origin.
    enum Transport: String, CaseIterable, Sendable {
        case asyncHTTPClient, http2
    }

    static func adapter(
        _ sim: WebPushSimHarness, _ transport: Transport, vapid: VAPIDSigner
    ) throws -> (WebPushPushAdapter, WebPushConnections?) {
        switch transport {
        case .asyncHTTPClient:
            return (WebPushPushAdapter(http: sim.http, vapid: vapid), nil)
        case .http2:
            let connections = WebPushConnections(trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(sim.caPEM.utf8)))
            return (WebPushPushAdapter(http: sim.http, connections: connections, vapid: vapid), connections)
        }
    }

    static func push(_ installation: Installation, message: String = "Look", notification: Int = 42) throws -> OutgoingPush {
        let rich = RichNotification(
            id: notification, message: message, richType: .image, contentType: "image/png", payloadHash: "h", payloadSize: 3,
            creator: "alice", target: "username:alice", createdAt: Int64(Date().timeIntervalSince1970 * 1000))
        return OutgoingPush(notification: notification, installation: installation, rendered: try PushRenderer().renderWebPush(rich))
    }

    @Test(arguments: Transport.allCases)
    func eachBrowserDecryptsItsOwnMessageAndOneTokenServesTheOrigin(transport: Transport) async throws {
        try await WebPushSimHarness.with { sim in
            let signer = try Self.signer()
            let (adapter, connections) = try Self.adapter(sim, transport, vapid: signer)
            defer { connections?.shutdown() }
            let browsers = [Browser(), Browser(), Browser()]
            var installations: [Installation] = []
            var sockets: [SubscriberSocket] = []
            for browser in browsers {
                let subscription = try await sim.subscribe(applicationServerKey: Self.vapidKey.publicKey)
                installations.append(browser.installation(subscription.endpoint))
                sockets.append(try await sim.connect(subscription))
            }
            let pushes = try installations.enumerated().map { try Self.push($1, message: "for browser \($0)") }
            let outcomes = try await adapter.send(pushes + pushes)
            #expect(
                outcomes.allSatisfy { if case .sent(let id) = $0 { id.hasPrefix(sim.origin + "/message/") } else { false } }, "\(outcomes)")
            for (index, socket) in sockets.enumerated() {
                let messages = try await socket.waitForMessages(2)
                #expect(messages.allSatisfy { $0.contentEncoding == "aes128gcm" && $0.urgency == "normal" && $0.ttl > 86_000 })
                for message in messages {
                    let plaintext = try browsers[index].decrypt(message.body)
                    #expect(plaintext == pushes[index].rendered.payload)
                }
                // Another browser's key does not open it.
                #expect(throws: WebPushError.self) { _ = try browsers[(index + 1) % 3].decrypt(messages[0].body) }
                await socket.close()
            }
            // Six messages to one origin: one VAPID signature.
            #expect(signer.signatureCount == 1)
        }
    }

    @Test(arguments: Transport.allCases)
    func eachAnswerOfThePushServiceLeadsToItsAction(transport: Transport) async throws {
        try await WebPushSimHarness.with { sim in
            let (adapter, connections) = try Self.adapter(sim, transport, vapid: try Self.signer())
            defer { connections?.shutdown() }
            let browser = Browser()
            // Removed at the service: 410, the registration goes.
            let gone = try await sim.subscribe(applicationServerKey: Self.vapidKey.publicKey)
            _ = try await sim.send(.DELETE, "https://127.0.0.1:\(sim.port)/subscription/\(gone.id)")
            // Restricted to another application server key: the service refuses our token.
            let other = P256.Signing.PrivateKey()
            let restricted = try await sim.subscribe(applicationServerKey: other.publicKey)
            var noKeys = browser.installation("https://127.0.0.1:\(sim.port)/push/none")
            noKeys.webPushKeys = nil
            let good = try await sim.subscribe(applicationServerKey: Self.vapidKey.publicKey)
            let tooLong = String(repeating: "a", count: 4000)
            let pushes = [
                try Self.push(browser.installation(gone.endpoint)),
                try Self.push(browser.installation(restricted.endpoint)),
                try Self.push(noKeys),
                try Self.push(browser.installation(good.endpoint)),
            ]
            var oversized = try Self.push(browser.installation(good.endpoint))
            oversized.rendered.payload = Array(tooLong.utf8)
            let outcomes = try await adapter.send(pushes + [oversized])
            #expect({ if case .invalidToken = outcomes[0] { true } else { false } }(), "\(outcomes[0])")
            #expect({ if case .failed(let reason, false) = outcomes[1] { reason.hasPrefix("403") } else { false } }(), "\(outcomes[1])")
            #expect({ if case .failed(_, false) = outcomes[2] { true } else { false } }(), "\(outcomes[2])")
            #expect({ if case .sent = outcomes[3] { true } else { false } }(), "\(outcomes[3])")
            // Over one record: refused here, never sent (the service would answer 413).
            #expect({ if case .failed(let reason, false) = outcomes[4] { reason.contains("3993") } else { false } }(), "\(outcomes[4])")
            #expect(sim.logLines.filter { $0.contains("\"status\":413") }.isEmpty)
        }
    }

    @Test(arguments: Transport.allCases)
    func aServiceThatAsksToWaitIsWaitedFor(transport: Transport) async throws {
        for (status, deferred) in [(429, true), (503, false)] {
            try await WebPushSimHarness.with({ $0.transient = [(status: status, share: 1)] }) { sim in
                let (adapter, connections) = try Self.adapter(sim, transport, vapid: try Self.signer())
                defer { connections?.shutdown() }
                let subscription = try await sim.subscribe()
                let outcome = try await adapter.send([try Self.push(Browser().installation(subscription.endpoint))])[0]
                switch outcome {
                case .deviceDeferred(_, let after): #expect(deferred && after > .zero, "\(outcome)")
                case .failedRetryAfter(_, let after): #expect(!deferred && after > .zero, "\(outcome)")
                default: Issue.record("\(status): \(outcome)")
                }
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func noServiceReachableFailsTheBatchForARetry(transport: Transport) async throws {
        try await RedisServer.withRefusingPort { port in
            let connections = transport == .http2 ? WebPushConnections(timeout: .seconds(5)) : nil
            defer { connections?.shutdown() }
            let adapter = WebPushPushAdapter(http: .shared, connections: connections, vapid: try Self.signer(), timeout: .seconds(5))
            await #expect(throws: (any Error).self) {
                _ = try await adapter.send([try Self.push(Browser().installation("https://127.0.0.1:\(port)/push/x"))])
            }
        }
    }

    /// RFC 8030 §8.4: a 429's `Retry-After` is for the subscription (the push resource). Once a
    /// subscription was answered 429, the adapter writes no request to it until the time, in this
    /// send or a later one, whatever the notification; another subscription of the same service
    /// goes on. The push service (`--subscription-rate`) refuses and logs any request inside the
    /// window: an adapter without the memory (the control) makes one.
    @Test(arguments: Transport.allCases)
    func aSubscriptionAskedToWaitGetsNoRequestUntilTheTime(transport: Transport) async throws {
        try await WebPushSimHarness.with({ $0.subscriptionRatePerMinute = 1 }) { sim in
            // At the start of a minute of the service's clock: the window lasts most of a minute.
            sim.clock.advance(seconds: 61 - sim.clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 60))
            let (adapter, connections) = try Self.adapter(sim, transport, vapid: try Self.signer())
            defer { connections?.shutdown() }
            let limited = try await sim.subscribe(), other = try await sim.subscribe()
            let a = Browser().installation(limited.endpoint), b = Browser().installation(other.endpoint)
            let first = try await adapter.send([try Self.push(a, notification: 1)])
            #expect({ if case .sent = first[0] { true } else { false } }(), "\(first)")
            let second = try await adapter.send([try Self.push(a, notification: 2)])
            guard case .deviceDeferred(_, let after) = second[0] else {
                Issue.record("expected the push held for the subscription: \(second)"); return
            }
            #expect(after > .seconds(30), "until the next minute: \(after)")
            let third = try await adapter.send([
                try Self.push(a, notification: 3), try Self.push(b, notification: 3), try Self.push(a, notification: 4),
            ])
            #expect({ if case .deviceDeferred = third[0] { true } else { false } }(), "\(third)")
            #expect({ if case .sent = third[1] { true } else { false } }(), "another subscription goes on: \(third)")
            #expect({ if case .deviceDeferred = third[2] { true } else { false } }(), "\(third)")
            let requestsToA = sim.logLines.filter { $0.contains("\"event\":\"push\"") && $0.contains(limited.id) }
            #expect(requestsToA.count == 2, "one sent, one answered 429, none after: \(requestsToA)")
            #expect(!sim.logLines.contains { $0.contains("inside_retry_after") })

            let (control, controlConnections) = try Self.adapter(sim, transport, vapid: try Self.signer())
            defer { controlConnections?.shutdown() }
            let refused = try await control.send([try Self.push(a, notification: 5)])
            #expect({ if case .deviceDeferred = refused[0] { true } else { false } }(), "\(refused)")
            #expect(
                sim.logLines.contains { $0.contains("inside_retry_after") }, "the push service refuses and logs a request inside the window"
            )
        }
    }
}
