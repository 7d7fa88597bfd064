import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import Testing

/// The sender's ttl and collapse id through a worker to the simulated hub: an offline device's
/// push is held no longer than its ttl, under the sender's collapse id.
@Suite("Delivery options through the hub")
struct DeliveryOptionsFlowTests {
    @Test func anOfflineDevicesPushIsHeldForItsTTLUnderItsCollapseID() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                // Registered, then offline: nothing listens on its channel.
                try await simulator.start()
                await simulator.stop()
                let handle = simulator.configuration.handle(of: 0)
                try await withWorker(pipeline.worker()) {
                    let id = try await pipeline.send(json: ["message": "m", "richType": "text", "payload": "p", "ttl": 30, "collapseId": "score"])
                    try await waitUntil(timeout: .seconds(20), "the push to be held") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                    }
                    let key = SimulatedHubAdapter.heldKey(prefix: pipeline.prefix, handle: handle)
                    let left = try await pipeline.redis.send("PTTL", key).int ?? -2
                    #expect((1...30_000).contains(left), "held for \(left) ms; the ttl is 30 s, the worker would hold for 60 s")
                    let envelope = try #require(try await pipeline.redis.send("GET", key).string)
                    #expect(envelope.contains(#""id":"score:"#), "\(envelope)")
                }
            }
        }
    }
}
