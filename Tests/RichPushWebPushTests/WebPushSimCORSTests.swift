import RichPushWebPushSim
import Testing

/// CORS on the subscriber's side of `webpush-sim`, so that a page from another origin (RichPush's
/// `/device`) can subscribe: the preflight answered, the answers readable; the application
/// server's side (`POST /push/<id>`) gets none.
@Suite("WebPushSim CORS")
struct WebPushSimCORSTests {
    let page = "http://127.0.0.1:8080"

    @Test func aPageFromAnotherOriginMaySubscribeAndUnsubscribe() async throws {
        try await WebPushSimHarness.with { sim in
            let preflight = try await sim.send(
                .OPTIONS, "https://127.0.0.1:\(sim.port)/subscribe",
                headers: [
                    ("origin", page), ("access-control-request-method", "POST"), ("access-control-request-headers", "content-type"),
                ])
            #expect(preflight.status == 204)
            #expect(preflight.header("access-control-allow-origin") == "*")
            #expect(preflight.header("access-control-allow-methods") == "POST")
            #expect(preflight.header("access-control-allow-headers")?.lowercased() == "content-type")
            #expect(preflight.header("access-control-allow-credentials") == nil, "no credentials: none are needed")

            let subscribed = try await sim.send(
                .POST, "https://127.0.0.1:\(sim.port)/subscribe", headers: [("origin", page), ("content-type", "application/json")],
                body: Array("{}".utf8))
            #expect(subscribed.status == 201)
            #expect(subscribed.header("access-control-allow-origin") == "*")
            let id = try #require(subscribed.json["subscriptionId"])

            let unsubscribePreflight = try await sim.send(
                .OPTIONS, "https://127.0.0.1:\(sim.port)/subscription/\(id)",
                headers: [
                    ("origin", page), ("access-control-request-method", "DELETE"),
                ])
            #expect(unsubscribePreflight.status == 204 && unsubscribePreflight.header("access-control-allow-methods") == "DELETE")
            let unsubscribed = try await sim.send(.DELETE, "https://127.0.0.1:\(sim.port)/subscription/\(id)", headers: [("origin", page)])
            #expect(unsubscribed.status == 204 && unsubscribed.header("access-control-allow-origin") == "*")
        }
    }

    @Test func theApplicationServersSideHasNoCORS() async throws {
        try await WebPushSimHarness.with { sim in
            let subscription = try await sim.subscribe()
            let preflight = try await sim.send(
                .OPTIONS, subscription.endpoint, headers: [("origin", page), ("access-control-request-method", "POST")])
            #expect(preflight.status != 204 && preflight.header("access-control-allow-origin") == nil)
            let push = try await sim.send(.POST, subscription.endpoint, headers: [("origin", page), ("ttl", "60")])
            #expect(push.status == 401 && push.header("access-control-allow-origin") == nil)
            // Without an Origin it is no cross-origin request: answered as before.
            let plain = try await sim.send(.POST, "https://127.0.0.1:\(sim.port)/subscribe", body: Array("{}".utf8))
            #expect(plain.status == 201 && plain.header("access-control-allow-origin") == nil)
        }
    }
}
