import Foundation
import RedisTestSupport
import Testing

/// `POST /api/notifications/batch` through the whole pipeline: the batch's valid items reach
/// the devices, each once, and its refused items reach nobody.
@Suite("Batch flow", .serialized)
struct BatchFlowTests {
    @Test func aBatchsValidItemsReachTheDevicesOnceAndItsRefusedOnesNobody() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(devices: 2, tap: .none, fetchPayload: false)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        let items: [[String: Any]] = (0..<6).map { index in
                            index % 3 == 1
                                ? ["richType": "text", "payload": "p\(index)", "priority": "urgent"]
                                : [
                                    "message": "batch \(index)", "richType": "text", "payload": "p\(index)",
                                    "idempotencyKey": "flow-\(index)",
                                ]
                        }
                        let answer = try await pipeline.call("POST", "api/notifications/batch", json: ["notifications": items])
                        #expect(answer.status == 200 && answer.json["accepted"] as? Int == 4 && answer.json["rejected"] as? Int == 2)
                        let results = answer.json["results"] as? [[String: Any]] ?? []
                        let ids = Set(results.compactMap { $0["id"] as? String })
                        #expect(ids.count == 4)
                        // Each accepted notification to both of alice's devices, once.
                        try await waitUntil(timeout: .seconds(60), "8 pushes at the devices") { log.count("received") >= 8 }
                        for id in ids {
                            try await waitUntil(timeout: .seconds(60), "notification \(id) recorded as sent twice") {
                                (try await pipeline.status(Int(id) ?? 0)["counts"] as? [String: Int])?["sent"] == 2
                            }
                        }
                        let received = log.all.filter { $0.event == "received" }
                        #expect(received.count == 8 && Set(received.compactMap(\.richId)) == ids)
                        #expect(Set(received.map { "\($0.richId ?? "")/\($0.device)" }).count == 8)
                    }
                }
            }
        }
    }
}
