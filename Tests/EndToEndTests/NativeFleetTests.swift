import Foundation
import RedisTestSupport
import RichPushStorage
import Synchronization
import Testing

/// Two `richpush worker --adapter apns,fcm` processes against one `richpush apns-sim` and one
/// `richpush fcm-sim` process, for iPhones and Android phones of one user. The fleet signs with one
/// APNs provider token (Apple refuses a team that mints them too often) and makes one OAuth2
/// exchange for FCM; FCM's answers lead to their actions (404 UNREGISTERED removes the
/// installation, 503 UNAVAILABLE is retried until sent); nothing is pushed twice; each worker
/// counts its outcomes per route in its metrics.
@Suite("Native fleet")
struct NativeFleetTests {
    static func lines(_ log: String) -> [[String: Any]] { NativeProcesses.lines(log) }

    @Test func twoWorkerProcessesShareOneTokenPerPlatformAndFollowFCMsAnswers() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "fleet") { native in
                let (store, installations) = (native.store, native.installations)
                let (iPhones, androids) = (12, 12)
                try await native.register(iPhones: iPhones, first: 0xF1EE7)
                try await native.register(androids: androids, named: "fleet")
                let apns = try await native.startAPNsSim()
                let fcm = try await native.startFCMSim(["--fail", "404:25%,503:10%", "--seed", "5"])
                let (apnsSim, fcmSim) = (apns.process, fcm.process)
                try await waitUntil(timeout: .seconds(60), "the simulators to listen") {
                    apnsSim.log.contains("listening") && fcmSim.log.contains("listening")
                }
                var metricsPorts: [Int] = []
                for name in ["w1", "w2"] {
                    let workers = try await native.startWorkers(
                        [name], adapter: "apns,fcm", ["--metrics-port", "0"] + apns.workerArguments + fcm.workerArguments)
                    metricsPorts.append(try await WorkerMetricsTests.metricsPort(of: workers[0]))
                }
                // When the fleet's mark of each dead token (written at the end of the batch that got
                // FCM's answer) is first seen, wall clock as the simulator logs it.
                let gone = RedisGoneTokens(redis: native.redis, keys: native.keys)
                let markSeen = Mutex<[String: Double]>([:])
                let watcher = Task {
                    let handles = (0..<androids).map { "fcm:fleet\($0):APA91b-\($0)" }
                    while !Task.isCancelled {
                        let marked = try await gone.gone(among: handles)
                        let now = Date().timeIntervalSince1970
                        markSeen.withLock { seen in for handle in marked.keys where seen[handle] == nil { seen[handle] = now } }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                defer { watcher.cancel() }
                let notifications = 20
                let ids = try await native.createNotifications(notifications)
                func fcmRequests() -> [[String: Any]] { Self.lines(fcmSim.log).filter { $0["issued"] == nil } }
                // Dead tokens are fixed by the seed: each live one must get every notification once.
                try await waitUntil(timeout: .seconds(90), "every push to reach its platform") {
                    let apnsSent = Self.lines(apnsSim.log).filter { $0["status"] as? Int == 200 }.count
                    let dead = Set(fcmRequests().filter { $0["error"] as? String == "UNREGISTERED" }.compactMap { $0["token"] as? String })
                    let fcmSent = fcmRequests().filter { $0["status"] as? Int == 200 }.count
                    return apnsSent == notifications * iPhones && !dead.isEmpty && fcmSent == notifications * (androids - dead.count)
                }
                let unregistered = Set(
                    fcmRequests().filter { $0["error"] as? String == "UNREGISTERED" }.compactMap { $0["token"] as? String })
                let live = androids - unregistered.count
                #expect(unregistered.count < androids, "\(unregistered)")
                // A token FCM declared dead gets nothing more from either worker once the fleet's
                // mark is written. A batch that checked the marks just before still sends what it
                // checked, so "late" is counted from when the mark was seen, plus 5 s for requests
                // under way (the first answer's time was the origin once: under load 12 a worker's
                // batch ended, and wrote the mark, more than 2 s after FCM answered).
                try await waitUntil(timeout: .seconds(30), "the dead tokens' marks to be seen") {
                    markSeen.withLock { seen in unregistered.allSatisfy { seen["fcm:\($0)"] != nil } }
                }
                for token in unregistered {
                    let seen = try #require(markSeen.withLock { $0["fcm:\(token)"] })
                    let late = fcmRequests().filter { $0["token"] as? String == token && ($0["at"] as? Double ?? 0) > seen + 5 }
                    #expect(late.isEmpty, "\(token) was sent \(late.count) requests more than 5 s after its mark was seen")
                }
                // Nothing twice: one 200 per (notification, device), whatever the retries.
                let accepted = fcmRequests().filter { $0["status"] as? Int == 200 }.compactMap { $0["token"] as? String }
                #expect(accepted.count == notifications * live && Set(accepted).count == live)
                #expect(fcmRequests().contains { $0["status"] as? Int == 503 }, "the 503s were answered, and retried")
                // 404: the installations are gone.
                let left = try await installations.installations(owner: "alice").filter { $0.platform == .fcm }
                #expect(Set(left.map(\.handle)) == Set((0..<androids).map { "fleet\($0):APA91b-\($0)" }).subtracting(unregistered))
                // One APNs provider token and one FCM token exchange for the whole fleet.
                #expect(Set(Self.lines(apnsSim.log).compactMap { $0["token"] as? String }).count == 1)
                #expect(Self.lines(fcmSim.log).filter { $0["issued"] != nil }.count == 1, "\(fcmSim.log)")
                // Every notification's status adds up.
                for id in ids {
                    try await waitUntil(timeout: .seconds(60), "notification \(id)'s counts") {
                        try await store.status(id: id)?.counts["sent"] == iPhones + live
                    }
                }
                // Each worker counted per route.
                var perRoute: [String: Double] = [:]
                try await waitUntil(timeout: .seconds(60), "the workers' counters to add up") {
                    perRoute = [:]
                    for port in metricsPorts {
                        let metrics = try await WorkerMetricsTests.scrape(port: port)
                        for route in ["apns", "fcm"] {
                            perRoute[route, default: 0] += metrics[#"richpush_pushes_total{adapter="\#(route)",outcome="sent"}"#] ?? 0
                        }
                    }
                    return perRoute["apns"] == Double(notifications * iPhones) && perRoute["fcm"] == Double(notifications * live)
                }
            }
        }
    }
}
