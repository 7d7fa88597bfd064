import Crypto
import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// Two `richpush worker --adapter apns,fcm` processes against one `richpush apns-sim` and one
/// `richpush fcm-sim` process, for iPhones and Android phones of one user. The fleet signs with one
/// APNs provider token (Apple refuses a team that mints them too often) and makes one OAuth2
/// exchange for FCM; FCM's answers lead to their actions (404 UNREGISTERED removes the
/// installation, 503 UNAVAILABLE is retried until sent); nothing is pushed twice; each worker
/// counts its outcomes per route in its metrics.
@Suite("Native fleet")
struct NativeFleetTests {
    static func lines(_ log: String) -> [[String: Any]] {
        log.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    @Test func twoWorkerProcessesShareOneTokenPerPlatformAndFollowFCMsAnswers() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("fleet").dropLast())
            let keys = StorageKeys(prefix: prefix)
            let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix))
            let store = RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600))
            let installations = RedisInstallationStore(redis: redis, keys: keys)
            let (iPhones, androids) = (12, 12)
            for index in 0..<iPhones {
                _ = try await installations.save(Installation(id: "ios\(index)", platform: .apns, handle: String(format: "%064lx", 0xF1EE7 + index),
                                                              tags: ["username:alice"], owner: "alice", updatedAt: 0), limits: RegistrationLimits())
            }
            for index in 0..<androids {
                _ = try await installations.save(Installation(id: "android\(index)", platform: .fcm, handle: "fleet\(index):APA91b-\(index)",
                                                              tags: ["username:alice"], owner: "alice", updatedAt: 0), limits: RegistrationLimits())
            }
            let keyFile = server.directory.appendingPathComponent("AuthKey.p8")
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: keyFile)
            let certs = server.directory.appendingPathComponent("apns")
            let apnsPort = try RedisServer.freePort()
            let apnsSim = try await ChildProcess(executable: try richpushExecutable(), arguments: [
                "apns-sim", "--redis-url", server.url, "--port", String(apnsPort), "--team-id", "DEF123GHIJ", "--key-id", "ABC123DEFG",
                "--key-file", keyFile.path, "--topic", "com.example.richpush", "--cert-dir", certs.path, "--no-forward", "--log-requests",
            ], logFile: server.directory.appendingPathComponent("apns-sim.log"))
            let fcmPort = try RedisServer.freePort()
            let fcmDirectory = server.directory.appendingPathComponent("fcm")
            let account = fcmDirectory.appendingPathComponent("service-account.json")
            let fcmSim = try await ChildProcess(executable: try richpushExecutable(), arguments: [
                "fcm-sim", "--redis-url", server.url, "--port", String(fcmPort), "--service-account", account.path, "--make-credentials",
                "--cert-dir", fcmDirectory.path, "--no-forward", "--log-requests", "--fail", "404:25%,503:10%", "--seed", "5",
            ], logFile: server.directory.appendingPathComponent("fcm-sim.log"))
            var workers: [ChildProcess] = []
            var metricsPorts: [Int] = []
            do {
                try await waitUntil(timeout: .seconds(20), "the simulators to listen") { apnsSim.log.contains("listening") && fcmSim.log.contains("listening") }
                for name in ["w1", "w2"] {
                    let port = try RedisServer.freePort()
                    metricsPorts.append(port)
                    workers.append(try await ChildProcess(executable: try richpushExecutable(), arguments: [
                        "worker", "--redis-url", server.url, "--queue-prefix", prefix, "--consumer", name, "--log-level", "warning",
                        "--metrics-port", String(port), "--adapter", "apns,fcm", "--apns-url", "https://127.0.0.1:\(apnsPort)",
                        "--apns-ca-file", certs.appendingPathComponent("ca.pem").path, "--apns-topic", "com.example.richpush",
                        "--apns-key-file", keyFile.path, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                        "--fcm-credentials", account.path, "--fcm-url", "https://127.0.0.1:\(fcmPort)",
                        "--fcm-ca-file", fcmDirectory.appendingPathComponent("ca.pem").path,
                    ], logFile: server.directory.appendingPathComponent("\(name).log")))
                }
                for port in metricsPorts {
                    try await waitUntil(timeout: .seconds(20), "a worker's metrics server") { RedisServer.isListening(port: port) }
                }
                let notifications = 20
                var ids: [Int] = []
                for _ in 0..<notifications {
                    ids.append(try await store.create(NotificationDraft(message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                                                                        creator: "alice", target: "username:alice")) { _ in "h" }.id)
                }
                func fcmRequests() -> [[String: Any]] { Self.lines(fcmSim.log).filter { $0["issued"] == nil } }
                // Dead tokens are fixed by the seed: each live one must get every notification once.
                try await waitUntil(timeout: .seconds(90), "every push to reach its platform") {
                    let apnsSent = Self.lines(apnsSim.log).filter { $0["status"] as? Int == 200 }.count
                    let dead = Set(fcmRequests().filter { $0["error"] as? String == "UNREGISTERED" }.compactMap { $0["token"] as? String })
                    let fcmSent = fcmRequests().filter { $0["status"] as? Int == 200 }.count
                    return apnsSent == notifications * iPhones && !dead.isEmpty && fcmSent == notifications * (androids - dead.count)
                }
                let unregistered = Set(fcmRequests().filter { $0["error"] as? String == "UNREGISTERED" }.compactMap { $0["token"] as? String })
                let live = androids - unregistered.count
                #expect(unregistered.count < androids, "\(unregistered)")
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
                    try await waitUntil(timeout: .seconds(20), "notification \(id)'s counts") {
                        try await store.status(id: id)?.counts["sent"] == iPhones + live
                    }
                }
                // Each worker counted per route.
                var perRoute: [String: Double] = [:]
                try await waitUntil(timeout: .seconds(20), "the workers' counters to add up") {
                    perRoute = [:]
                    for port in metricsPorts {
                        let metrics = try await WorkerMetricsTests.scrape(port: port)
                        for route in ["apns", "fcm"] { perRoute[route, default: 0] += metrics[#"richpush_pushes_total{adapter="\#(route)",outcome="sent"}"#] ?? 0 }
                    }
                    return perRoute["apns"] == Double(notifications * iPhones) && perRoute["fcm"] == Double(notifications * live)
                }
            } catch {
                for process in workers + [apnsSim, fcmSim] { process.signal(SIGTERM) }
                for process in workers + [apnsSim, fcmSim] { _ = try await process.wait(timeout: .seconds(15)) }
                await redis.close()
                throw error
            }
            for process in workers + [apnsSim, fcmSim] { process.signal(SIGTERM) }
            for process in workers + [apnsSim, fcmSim] { #expect(try await process.wait(timeout: .seconds(15)) == 0) }
            await redis.close()
        }
    }
}
