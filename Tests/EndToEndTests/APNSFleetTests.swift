import Crypto
import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// Two `richpush worker --adapter apns` processes against one `richpush apns-sim` process: the
/// fleet signs with one provider token (Apple refuses a team that mints them too often), and
/// each worker counts its APNs outcomes in its metrics.
@Suite("APNs fleet")
struct APNSFleetTests {
    @Test func twoWorkerProcessesShareOneProviderToken() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("fleet").dropLast())
            let keys = StorageKeys(prefix: prefix)
            let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix))
            let store = RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600))
            let devices = 20
            for index in 0..<devices {
                _ = try await RedisInstallationStore(redis: redis, keys: keys).save(
                    Installation(id: "d\(index)", platform: .apns, handle: String(format: "%064lx", 0xF1EE7 + index), tags: ["username:alice"],
                                 owner: "alice", updatedAt: 0), limits: RegistrationLimits())
            }
            let keyFile = server.directory.appendingPathComponent("AuthKey.p8")
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: keyFile)
            let certs = server.directory.appendingPathComponent("apns")
            let apnsPort = try RedisServer.freePort()
            let sim = try await ChildProcess(executable: try richpushExecutable(), arguments: [
                "apns-sim", "--redis-url", server.url, "--port", String(apnsPort), "--team-id", "DEF123GHIJ", "--key-id", "ABC123DEFG",
                "--key-file", keyFile.path, "--topic", "com.example.richpush", "--cert-dir", certs.path, "--no-forward", "--log-requests",
            ], logFile: server.directory.appendingPathComponent("apns-sim.log"))
            var workers: [ChildProcess] = []
            var metricsPorts: [Int] = []
            do {
                try await waitUntil(timeout: .seconds(20), "apns-sim to listen") { sim.log.contains("listening") }
                for name in ["w1", "w2"] {
                    let port = try RedisServer.freePort()
                    metricsPorts.append(port)
                    workers.append(try await ChildProcess(executable: try richpushExecutable(), arguments: [
                        "worker", "--redis-url", server.url, "--queue-prefix", prefix, "--consumer", name, "--log-level", "warning",
                        "--metrics-port", String(port), "--adapter", "apns", "--apns-url", "https://127.0.0.1:\(apnsPort)",
                        "--apns-ca-file", certs.appendingPathComponent("ca.pem").path, "--apns-topic", "com.example.richpush",
                        "--apns-key-file", keyFile.path, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                    ], logFile: server.directory.appendingPathComponent("\(name).log")))
                }
                for port in metricsPorts {
                    try await waitUntil(timeout: .seconds(20), "a worker's metrics server") { RedisServer.isListening(port: port) }
                }
                let notifications = 30
                for _ in 0..<notifications {
                    _ = try await store.create(NotificationDraft(message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                                                                 creator: "alice", target: "username:alice")) { _ in "h" }
                }
                func requests() -> [[String: Any]] {
                    sim.log.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
                }
                try await waitUntil(timeout: .seconds(60), "every push to reach apns-sim") { requests().count >= notifications * devices }
                let seen = requests()
                #expect(seen.count == notifications * devices && seen.allSatisfy { $0["status"] as? Int == 200 })
                // One provider token for the whole fleet.
                #expect(Set(seen.compactMap { $0["token"] as? String }).count == 1, "\(Set(seen.compactMap { $0["token"] as? String }))")
                // Both workers sent, and each counted its APNs outcomes.
                var sentPerWorker: [Double] = []
                try await waitUntil(timeout: .seconds(20), "the workers' counters to add up") {
                    sentPerWorker = []
                    for port in metricsPorts {
                        sentPerWorker.append(try await WorkerMetricsTests.scrape(port: port)[#"richpush_pushes_total{adapter="apns",outcome="sent"}"#] ?? 0)
                    }
                    return sentPerWorker.reduce(0, +) == Double(notifications * devices)
                }
                #expect(sentPerWorker.allSatisfy { $0 > 0 }, "\(sentPerWorker)")
            } catch {
                for process in workers + [sim] { process.signal(SIGTERM) }
                for process in workers + [sim] { _ = try await process.wait(timeout: .seconds(15)) }
                await redis.close()
                throw error
            }
            for process in workers + [sim] { process.signal(SIGTERM) }
            for process in workers + [sim] { #expect(try await process.wait(timeout: .seconds(15)) == 0) }
            await redis.close()
        }
    }
}
