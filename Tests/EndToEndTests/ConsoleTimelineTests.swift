import Foundation
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The console's device timeline after a real delivery: the API, a worker with the simulated
/// hub and a simulated device that fetches the payload, shows it and opens it.
@Suite("Console timeline")
struct ConsoleTimelineTests {
    @Test func everyStepOfARealDeliveryHasItsTimeInTheTimeline() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                _ = try await RedisUserStore(redis: pipeline.redis, keys: pipeline.keys).setConsoleAccess(
                    name: "root", ConsoleAccess(role: .viewer))
                let simulator = try pipeline.simulator()
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        let id = try await pipeline.send(json: [
                            "message": "Timeline", "richType": "img", "payload": Data(RichPushFlowTests.image).base64EncodedString(),
                        ])
                        try await waitUntil(timeout: .seconds(60), "the device to open it") { log.count("opened") == 1 }
                        // The device can be done before the worker has recorded the hub's answer.
                        try await waitUntil(timeout: .seconds(60), "the push recorded") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 1
                        }
                        let cookie = try await Self.signIn(pipeline, user: "root")
                        let detail = try await Self.get(pipeline, "/console/notifications?id=\(id)", cookie: cookie)
                        let device = try #require((detail["devices"] as? [[String: Any]])?.first, "\(detail)")
                        #expect(
                            device["state"] as? String == "opened" && device["platform"] as? String == "apns"
                                && device["fetched"] as? Bool == true)
                        let times = try #require(device["times"] as? [String: Int])
                        let created = try #require(detail["createdAt"] as? Int)
                        let steps = ["at", "fetchedAt", "displayedAt", "openedAt"].compactMap { times[$0] }
                        #expect(steps.count == 4, "every step has its time: \(times)")
                        #expect(steps.allSatisfy { $0 >= created }, "none before the notification was created: \(created), \(times)")
                        #expect((times["displayedAt"] ?? .max) <= (times["openedAt"] ?? 0))
                        let rendered = try #require((detail["rendered"] as? [[String: Any]])?.first)
                        #expect(
                            rendered["format"] as? String == "apns"
                                && (rendered["payload"] as? String)?.contains("\"richId\" : \"\(id)\"") == true)
                        // The device's page finds the push in its ledger.
                        let installation = try #require(device["installation"] as? String)
                        let page = try await Self.get(pipeline, "/console/devices?id=\(installation)", cookie: cookie)
                        #expect((page["recentPushes"] as? [[String: Any]])?.first?["notification"] as? Int == id)
                    }
                }
            }
        }
    }

    /// Signs in to the console as a script does (its own origin named); the session's cookie.
    static func signIn(_ pipeline: Pipeline, user: String) async throws -> String {
        let answer = try await ConsoleHTTP.call(pipeline.baseURL, "POST", "console/login", form: "user=\(user)&password=\(user)-pw")
        return try #require(answer.cookie, "sign-in: \(answer.status) \(answer.body)")
    }

    static func get(_ pipeline: Pipeline, _ path: String, cookie: String) async throws -> [String: Any] {
        let answer = try await ConsoleHTTP.call(pipeline.baseURL, "GET", path, cookie: cookie)
        #expect(answer.status == 200, "\(path): \(answer.body)")
        return (try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]) ?? [:]
    }
}
