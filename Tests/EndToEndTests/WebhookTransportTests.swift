import AsyncHTTPClient
import Foundation
import RichPushWebhooks
import Testing

/// The dispatcher's HTTP transport against receivers that are down.
@Suite("Webhook transport")
struct WebhookTransportTests {
    /// A receiver that refuses the connection (nothing listens) is a failed attempt at once, with
    /// the refusal as its error: not a wait for the attempt's whole timeout while the client
    /// tries to connect again, which held a delivery slot and put the first recorded attempt of a
    /// down receiver 10 s (the timeout) late.
    @Test func aRefusedConnectionFailsTheAttemptAtOnceNamingTheRefusal() async throws {
        let (port, held) = try WebhookFlowTests.downPort()
        defer { close(held) }
        // A client that tried again would answer at its connect timeout: 120 s here.
        var configuration = HTTPWebhookTransport.configuration(connections: 4)
        configuration.timeout.connect = .seconds(120)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let transport = HTTPWebhookTransport(client: client)
        let started = ContinuousClock.now
        let response = await transport.post(
            url: "http://127.0.0.1:\(port)/hook", headers: [], body: Array("{}".utf8), timeout: .seconds(300))
        let elapsed = ContinuousClock.now - started
        try await client.shutdown()
        #expect(response.status == nil && !response.isSuccess)
        #expect(response.error?.localizedCaseInsensitiveContains("refused") == true, "\(response.error ?? "")")
        // A retrying client answers at its connect timeout (120 s); a refused loopback connect
        // takes milliseconds, so 60 s is far from both even on a machine that stalls for seconds.
        #expect(elapsed < .seconds(60), "\(elapsed)")
    }
}
