import Foundation
import Hiredis
import Logging
import RedisTestSupport
import RichPushBench

@testable import RichPushQueue

/// A queue with a key prefix of its own on a private server, plus helpers to run workers
/// in-process or as real `richpush worker` processes.
struct QueueFixture {
    let server: RedisServer
    let redis: RedisConnectionPool
    let queue: JobQueue
    let recordKey: String

    init(server: RedisServer, configure: (inout JobQueueConfiguration) -> Void = { _ in }) {
        self.server = server
        redis = RedisConnectionPool(configuration: server.configuration, size: 2)
        let prefix = uniqueKeyPrefix("q").dropLast()
        var configuration = JobQueueConfiguration(prefix: String(prefix))
        configure(&configuration)
        queue = JobQueue(redis: redis, configuration: configuration)
        recordKey = String(prefix) + ":handled"
    }

    /// Probe jobs whose handler records `field` in the fixture's record key.
    func probe(_ field: String, sleepMs: Int? = nil, failTimes: Int? = nil, permanent: Bool? = nil) -> JobRequest {
        JobRequest(
            type: ProbeJobHandler.type,
            payload: ProbeJobHandler.Payload(key: recordKey, field: field, sleepMs: sleepMs, failTimes: failTimes, permanent: permanent)
                .bytes)
    }

    /// `count` probe jobs of `app` (under fair scheduling) in `lane`.
    func jobs(_ app: String, _ count: Int, lane: JobLane = .now) -> [JobRequest] {
        (0..<count).map {
            var request = probe("\(app)-\(lane.rawValue)-\($0)")
            request.app = app
            request.lane = lane
            return request
        }
    }

    /// How many times each field was handled.
    func handledCounts() async throws -> [String: Int] {
        let flat = try await redis.send("HGETALL", recordKey).array ?? []
        var counts: [String: Int] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            counts[flat[index].string ?? ""] = flat[index + 1].int ?? 0
        }
        return counts
    }

    func worker(
        _ handlers: JobHandlers? = nil, consumer: String = "w-\(UUID().uuidString.prefix(6))",
        tune: (inout JobWorkerConfiguration) -> Void = { _ in }
    ) -> JobWorker {
        var configuration = JobWorkerConfiguration(
            consumer: consumer, concurrency: 16, blockTime: .milliseconds(100), drainTimeout: .seconds(5),
            maintenanceInterval: .milliseconds(50))
        tune(&configuration)
        var logger = Logger(label: "test.worker")
        logger.logLevel = .warning
        return JobWorker(
            queue: queue, handlers: handlers ?? probeHandlers(), redis: server.configuration, configuration: configuration, logger: logger)
    }

    func probeHandlers() -> JobHandlers {
        var handlers = JobHandlers()
        handlers.register(ProbeJobHandler(redis: redis), for: ProbeJobHandler.type)
        return handlers
    }

    /// Runs in-process workers while `body` runs, then stops them gracefully.
    func withWorkers<T: Sendable>(_ workers: [JobWorker], _ body: () async throws -> T) async throws -> T {
        try await RedisTestSupport.withWorkers(workers, body)
    }

    /// Starts a real worker process on this queue: `richpush-bench worker`, which is `richpush
    /// worker` with the `probe` job type these tests enqueue.
    /// `logLevel` info makes the worker log "worker started" once its loop runs (after the
    /// service group installed its signal handlers).
    func spawnWorker(name: String, logLevel: String = "warning", extra: [String] = []) async throws -> ChildProcess {
        let c = queue.configuration
        let arguments =
            [
                "worker", "--redis-url", server.url, "--queue-prefix", c.prefix, "--queue-partition", c.partition,
                "--visibility-timeout",
                "\(Double(c.visibilityTimeout.components.seconds) + Double(c.visibilityTimeout.components.attoseconds) / 1e18)",
                "--max-deliveries", "\(c.maxDeliveries)", "--max-attempts", "\(c.retry.maxAttempts)",
                "--maintenance-interval", "0.1", "--consumer", name, "--log-level", logLevel,
            ] + extra
        return try await ChildProcess(
            executable: try richpushBenchExecutable(), arguments: arguments,
            logFile: server.directory.appendingPathComponent("\(name).log"))
    }
}
