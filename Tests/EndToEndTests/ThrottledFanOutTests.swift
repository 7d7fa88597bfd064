import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

/// `throttlePerMinute`: one notification's pushes spread at that rate (so the devices' fetches
/// are too).
@Suite("Throttled fan-out")
struct ThrottledFanOutTests {
    @Test func pushesSpreadAtTheRate() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(devices: 30, tap: .none)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        // 300 a minute: batches of 5, one a second, six of them.
                        let id = try await pipeline.send(json: ["message": "m", "richType": "text", "payload": "p", "throttlePerMinute": 300])
                        try await waitUntil(timeout: .seconds(60), "30 devices to get it") {
                            log.all.filter { $0.event == "received" && $0.richId == String(id) }.count == 30
                        }
                        let times = log.all.filter { $0.event == "received" && $0.richId == String(id) }.compactMap(\.at).sorted()
                        let spread = Double((times.last ?? 0) - (times.first ?? 0)) / 1_000_000
                        #expect(spread >= 4, "30 pushes at 300/min take 5 s; they took \(spread) s")
                        #expect((try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 30)
                    }
                }
            }
        }
    }
}
