import APITestSupport
import AsyncHTTPClient
import Foundation
import Hiredis
import Hummingbird
import HummingbirdBcrypt
import Logging
import RedisTestSupport
import RichPushAPI
import RichPushAdapters
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import RichPushWorker
import ServiceLifecycle
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole pipeline in one test process, every part real: a private redis-server (or a local
/// Redis Cluster), the API listening on a free loopback port, in-process workers with the
/// simulated hub, and simulated devices that talk to the API over HTTP and to the hub over Pub/Sub.
struct Pipeline {
    /// The private redis-server (nil on a cluster).
    let server: RedisServer?
    let redis: any RedisClient
    /// On a cluster, its client (the same as `redis`).
    let cluster: RedisClusterClient?
    /// A node's settings: the server's, or on a cluster a seed's (the device simulator's).
    let node: RedisConfiguration
    let prefix: String
    let keys: StorageKeys
    let queue: JobQueue
    let port: Int

    /// Starts the API (returned task runs it) for users alice (user) and root (admin).
    /// `prefix`: the keys' (a fresh one when nil; `richpush`, the default, for data another build wrote).
    /// `visibilityTimeout`: how long a job taken by a stalled worker stays its own (2 s, so the
    /// tests of a worker's death see its jobs reclaimed soon); a test that counts attempts
    /// exactly gives more, so that a stall of a busy machine is not an extra attempt.
    static func start(
        server: RedisServer, retry: RetryPolicy = RetryPolicy(maxAttempts: 3, base: .milliseconds(10), cap: .milliseconds(50)),
        partitions: Int = 1, prefix: String? = nil, visibilityTimeout: Duration = .seconds(2),
        configure: (inout APIConfiguration) -> Void = { _ in }, _ body: (Pipeline) async throws -> Void
    ) async throws {
        let redis = RedisConnectionPool(configuration: server.configuration, size: 2)
        try await start(
            redis: redis, server: server, cluster: nil, node: server.configuration, retry: retry, partitions: partitions, prefix: prefix,
            visibilityTimeout: visibilityTimeout, configure: configure, body)
    }

    /// The same on a local Redis Cluster; `configure` may change the API's configuration.
    static func start(
        cluster local: LocalRedisCluster, retry: RetryPolicy = RetryPolicy(maxAttempts: 3, base: .milliseconds(10), cap: .milliseconds(50)),
        partitions: Int, configure: (inout APIConfiguration) -> Void = { _ in }, _ body: (Pipeline) async throws -> Void
    ) async throws {
        let cluster = RedisClusterClient(configuration: local.configuration)
        do {
            try await start(
                redis: cluster, server: nil, cluster: cluster, node: local.configuration.configuration(for: local.configuration.seeds[0]),
                retry: retry, partitions: partitions, configure: configure, body)
        } catch {
            await cluster.close()
            throw error
        }
        await cluster.close()
    }

    private static func start(
        redis: any RedisClient, server: RedisServer?, cluster: RedisClusterClient?, node: RedisConfiguration, retry: RetryPolicy,
        partitions: Int, prefix: String? = nil, visibilityTimeout: Duration = .seconds(2),
        configure: (inout APIConfiguration) -> Void = { _ in },
        _ body: (Pipeline) async throws -> Void
    ) async throws {
        let prefix = prefix ?? String(uniqueKeyPrefix("e2e").dropLast())
        let keys = StorageKeys(prefix: prefix, partitions: partitions, clusterSafe: cluster != nil)
        let queueConfiguration = JobQueueConfiguration(prefix: prefix, visibilityTimeout: visibilityTimeout, retry: retry)
        try await TestAPI.addUsers([("alice", .user), ("root", .admin)], to: RedisUserStore(redis: redis, keys: keys))
        let configuration = TestAPI.configuration {
            // The tests' webhook receivers listen on loopback.
            $0.webhookAllowPrivate = true
            configure(&$0)
        }
        var dependencies = APIDependencies.redis(redis: redis, keys: keys, queue: queueConfiguration, configuration: configuration)
        // As `richpush api` has it: requests may name an app (`alice@shop`).
        dependencies.apps = RedisAppStore(redis: redis, keys: AppKeys(prefix: prefix), ring: nil)
        try await TestAPI(configuration: configuration, dependencies: dependencies, label: "e2e").serve { port in
            try await body(
                Pipeline(
                    server: server, redis: redis, cluster: cluster, node: node, prefix: prefix, keys: keys,
                    queue: JobQueue(redis: redis, configuration: queueConfiguration), port: port))
        }
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func worker(
        fanOutBatch: Int = 500, consumer: String = "w-\(UUID().uuidString.prefix(6))",
        adapter: RichPushWorkerConfiguration.Adapter = .simulated(holdFor: .seconds(60)), leaseDuration: Duration = .seconds(30),
        fcm: RichPushWorkerConfiguration.FCMSettings? = nil
    ) -> JobWorker {
        workers(fanOutBatch: fanOutBatch, consumer: consumer, adapter: adapter, leaseDuration: leaseDuration, fcm: fcm)[0]
    }

    /// A worker process's job loops: one per partition.
    func workers(
        fanOutBatch: Int = 500, consumer: String = "w-\(UUID().uuidString.prefix(6))",
        adapter: RichPushWorkerConfiguration.Adapter = .simulated(holdFor: .seconds(60)), leaseDuration: Duration = .seconds(30),
        fcm: RichPushWorkerConfiguration.FCMSettings? = nil
    ) -> [JobWorker] {
        process(fanOutBatch: fanOutBatch, consumer: consumer, adapter: adapter, leaseDuration: leaseDuration, fcm: fcm).workers
    }

    /// A worker process as `richpush worker` builds it (its composition root), on this pipeline's
    /// Redis and keys, with the tests' short timings.
    func process(
        fanOutBatch: Int = 500, consumer: String = "w-\(UUID().uuidString.prefix(6))",
        adapter: RichPushWorkerConfiguration.Adapter = .simulated(holdFor: .seconds(60)), leaseDuration: Duration = .seconds(30),
        fcm: RichPushWorkerConfiguration.FCMSettings? = nil, process: WorkerProcess.Configuration = WorkerProcess.Configuration(),
        apps: WorkerAppCredentials? = nil, logger label: String = "e2e.worker", logLevel: Logger.Level = .error
    ) -> WorkerProcess {
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        var configuration = RichPushWorkerConfiguration(
            worker: JobWorkerConfiguration(
                consumer: consumer, concurrency: 32, blockTime: .milliseconds(100),
                drainTimeout: .seconds(2), maintenanceInterval: .milliseconds(50)),
            adapter: adapter, fanOutBatch: fanOutBatch, retention: .seconds(3600), leaseDuration: leaseDuration, fcm: fcm)
        configuration.apps = apps
        return buildWorker(
            configuration: configuration,
            dependencies: WorkerDependencies(
                redis: redis, redisConfiguration: node, keys: keys, queue: queue.configuration,
                locator: cluster.map { .cluster($0) }),
            process: process, logger: logger)
    }

    func simulator(
        devices: Int = 1, appState: SimulatorConfiguration.AppState = .active, tap: SimulatorConfiguration.Tap = .more,
        out: URL? = nil, handlePrefix: String = "phone", apnsTokens: Bool = false,
        platforms: SimulatorConfiguration.Devices = .apns, fetchPayload: Bool = true
    ) throws -> DeviceSimulator {
        var configuration = SimulatorConfiguration(
            apiBaseURL: baseURL, user: "alice", password: "alice-pw", devices: devices, appState: appState, tap: tap,
            fireDelay: .milliseconds(50), outDirectory: out, redis: node, hubPrefix: prefix,
            handlePrefix: "\(prefix)-\(handlePrefix)")
        configuration.cluster = cluster
        configuration.fetch = fetchPayload
        configuration.apnsTokens = apnsTokens
        configuration.platforms = platforms
        return try DeviceSimulator(configuration: configuration)
    }

    /// POSTs a notification as `user` with a JSON body; returns its id.
    func send(as user: String = "alice", json: [String: Any]) async throws -> Int {
        var request = URLRequest(url: baseURL.appendingPathComponent("api/notifications"))
        request.httpMethod = "POST"
        request.setValue("Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 202,
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let id = (object["id"] as? String).flatMap(Int.init)
        else {
            throw RedisServerError("send failed: \(String(decoding: data, as: UTF8.self))")
        }
        return id
    }

    /// Calls the API as `user` with an optional JSON body: the status and the JSON answer.
    func call(
        _ method: String, _ path: String, as user: String = "alice", json: [String: Any]? = nil
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// The status JSON of a notification, read as its creator.
    func status(_ id: Int, as user: String = "alice") async throws -> [String: Any] {
        var request = URLRequest(url: baseURL.appendingPathComponent("api/notifications/\(id)/status"))
        request.setValue("Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}

/// Collects a simulator's events while it runs.
final class EventLog: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var events: [SimulatorEvent] = []

    func append(_ event: SimulatorEvent) { lock.withLock { events.append(event) } }
    var all: [SimulatorEvent] { lock.withLock { events } }
    func count(_ name: String) -> Int { all.filter { $0.event == name }.count }
}

/// Runs `body` while the simulator handles pushes and its events are collected; `tags` gives
/// each device index extra tags.
func withSimulator(
    _ simulator: DeviceSimulator, tags: @escaping @Sendable (Int) -> [String] = { _ in [] },
    _ body: (EventLog) async throws -> Void
) async throws {
    let log = EventLog()
    try await simulator.start(tags: tags)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { for await event in simulator.events { log.append(event) } }
        group.addTask { try await simulator.run() }
        do {
            try await body(log)
        } catch {
            await simulator.stop()
            try? await group.waitForAll()
            throw error
        }
        await simulator.stop()
        try await group.waitForAll()
    }
}
