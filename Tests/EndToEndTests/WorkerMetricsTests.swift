import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `richpush worker --metrics-port`: a real worker process scraped over HTTP while it runs real
/// rich-push jobs through the simulated hub to a subscribed device.
@Suite("Worker metrics", .serialized)
struct WorkerMetricsTests {
    @Test func documentedSeriesAppearAndMoveWhenJobsRun() async throws {
        try await withRedisServer { server in
            let redis = RedisConnectionPool(configuration: server.configuration, size: 1)
            let prefix = String(uniqueKeyPrefix("metrics").dropLast())
            let keys = StorageKeys(prefix: prefix)
            let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix))
            let store = RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600))
            _ = try await RedisInstallationStore(redis: redis, keys: keys).save(
                Installation(id: "i1", platform: .apns, handle: "phone-1", tags: ["username:alice"], owner: "alice", updatedAt: 0),
                limits: RegistrationLimits())
            let device = RedisSubscriber(configuration: server.configuration)
            try await device.ssubscribe([SimulatedHubAdapter.channel(prefix: prefix, handle: "phone-1")])
            let worker = try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "worker", "--redis-url", server.url, "--queue-prefix", prefix, "--consumer", "m1", "--log-level", "warning",
                    "--metrics-port", "0", "--queue-metrics-interval", "0.2", "--maintenance-interval", "0.1",
                ], logFile: server.directory.appendingPathComponent("worker.log"))
            let port = try await Self.metricsPort(of: worker)

            func draft(_ target: String) -> NotificationDraft {
                NotificationDraft(
                    message: "m", richType: .image, contentType: "image/png", payload: [1, 2, 3], creator: "alice", target: target)
            }
            let first = try await store.create(draft("username:alice")) { _ in "h" }
            for _ in 1..<20 { _ = try await store.create(draft("username:alice")) { _ in "h" } }
            _ = try await store.create(draft("((")) { _ in "h" }  // an invalid target: dead-lettered
            try await waitUntil(timeout: .seconds(60), "the jobs to finish") {
                let stats = try await queue.stats()
                return stats.processed == 20 && stats.deadLetters == 1
            }
            // A redelivered job for a notification already pushed: suppressed, not pushed again.
            _ = try await queue.enqueue(RichPushJob.request(notification: first.id))
            try await waitUntil(timeout: .seconds(60), "the redelivered job") { try await queue.stats().processed == 21 }

            var metrics: [String: Double] = [:]
            try await waitUntil(timeout: .seconds(60), "the queue gauges") {
                metrics = try await Self.scrape(port: port)
                return metrics["richpush_queue_dead_jobs"] == 1 && metrics["richpush_queue_pending_jobs"] == 0
            }
            #expect(metrics[#"richpush_jobs_total{outcome="completed",type="rich-push"}"#] == 21)
            #expect(metrics[#"richpush_jobs_total{outcome="dead_lettered",type="rich-push"}"#] == 1)
            #expect(metrics[#"richpush_pushes_total{adapter="simulated",outcome="sent"}"#] == 20)
            // The same by app: all the default app's here.
            #expect(metrics[#"richpush_app_pushes_total{app="default",outcome="sent"}"#] == 20)
            #expect(metrics["richpush_duplicates_suppressed_total"] == 1)
            #expect(metrics[#"richpush_enqueue_to_device_seconds_count{adapter="simulated"}"#] == 20)
            #expect(metrics["richpush_render_seconds_count"] == 21)
            #expect((metrics[#"richpush_send_seconds_count{adapter="simulated"}"#] ?? 0) >= 1)
            #expect(metrics["richpush_job_wait_seconds_count"] == 22)
            #expect(metrics[#"richpush_job_duration_seconds_count{type="rich-push"}"#] == 22)
            #expect(metrics["richpush_jobs_running"] == 0)
            #expect(metrics["richpush_queue_lag_jobs"] == 0)
            #expect(metrics["richpush_queue_delayed_jobs"] == 0)

            // Every series the Grafana dashboard queries is one this worker exposes.
            let exposed = Set(metrics.keys.map { String($0.prefix { $0 != "{" }) })
            for name in try Self.dashboardMetricNames() {
                #expect(exposed.contains(name), "the dashboard queries \(name), which the worker does not expose")
            }

            worker.signal(SIGTERM)
            #expect(try await worker.wait() == 0)
            await device.close()
            await redis.close()
        }
    }

    /// The `richpush_…` series named in the expressions of deploy/grafana/dashboards/richpush.json.
    static func dashboardMetricNames() throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("deploy/grafana/dashboards/richpush.json"))
        var expressions: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                if let expr = object["expr"] as? String { expressions.append(expr) }
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(try JSONSerialization.jsonObject(with: data))
        let pattern = try NSRegularExpression(pattern: "richpush_[a-z_]+")
        var names = Set<String>()
        for expr in expressions {
            for match in pattern.matches(in: expr, range: NSRange(expr.startIndex..., in: expr)) {
                names.insert(String(expr[Range(match.range, in: expr)!]))
            }
        }
        #expect(names.count >= 10, "found only \(names) in the dashboard")
        return names
    }

    /// The Prometheus text as `series{labels sorted} → value`.
    /// The port a worker started with `--metrics-port 0` says it listens on. (A port found free
    /// beforehand can be taken by a connection of a test beside it before the worker binds it:
    /// CI once waited 60 s for a metrics server that never listened.)
    static func metricsPort(of worker: ChildProcess) async throws -> Int {
        var port: Int?
        try await waitUntil(timeout: .seconds(60), "the worker's metrics server") {
            let log = worker.log
            if let range = log.range(of: "metrics listening on http://127.0.0.1:") {
                port = Int(log[range.upperBound...].prefix { $0.isNumber })
                return port != nil
            }
            if let status = try await worker.wait(timeout: .milliseconds(1)) {
                throw RedisServerError("the worker exited (\(status)) before its metrics server listened: \(log.suffix(2000))")
            }
            return false
        }
        return try #require(port)
    }

    static func scrape(port: Int) async throws -> [String: Double] {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        var result: [String: Double] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            var series = String(line[..<space])
            if let open = series.firstIndex(of: "{"), series.hasSuffix("}") {
                let labels = series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",").sorted()
                series = String(series[..<open]) + (labels.isEmpty ? "" : "{" + labels.joined(separator: ",") + "}")
            }
            result[series] = value
        }
        return result
    }
}
