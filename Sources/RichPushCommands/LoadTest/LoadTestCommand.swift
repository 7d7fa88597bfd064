import ArgumentParser
import Foundation
import Hiredis
import Logging
import RichPushCore
import RichPushNH
import RichPushQueue
import RichPushReport
import RichPushSimulator
import RichPushStorage

/// `richpush loadtest`: the referee of scripts/loadtest.sh. Registers M simulated devices (each
/// with a tag of its own) through the API, creates N notifications addressed one device each or
/// all of them in the chosen shape of load (`--via api`: `POST /api/notifications` over keep-alive
/// connections, as a user does; `--via api-batch`: `POST /api/notifications/batch`, `--batch-size`
/// to a request; `--via nh`: as code written for Notification Hubs sends, an `apple` native send
/// per notification to the hub's listener; `--via nh-batch`: a batch direct send to every
/// device's handle per notification; `--via store`: record + payload + job straight into Redis), and
/// measures what the devices see and what each process spent. Workers and the API run as their own processes,
/// started by the script; `--report DIR` writes report.json, report.html and overview.svg.
struct LoadTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadtest",
        abstract: "Drive the full pipeline with simulated devices and print throughput, latency, lost and duplicated.")

    enum Mode: String, ExpressibleByArgument, CaseIterable { case silent, rich }
    enum Audience: String, ExpressibleByArgument, CaseIterable { case one, all }
    enum Via: String, ExpressibleByArgument, CaseIterable {
        case api, store, nh
        case apiBatch = "api-batch"
        case nhBatch = "nh-batch"
    }

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Base URL of the API.") var api = "http://127.0.0.1:8080"
    @Option(help: "User the devices register as (an admin, to address devices by tag).") var user: String
    @Option(help: "Password (or RICHPUSH_PASSWORD).") var password: String?
    @Option(
        help:
            "api: create notifications with POST /api/notifications (HTTP, auth, the backlog guard), as users do; api-batch: with POST /api/notifications/batch, --batch-size to a request; store: straight into Redis through the store, without HTTP."
    ) var via: Via = .api
    @Option(help: "With --via api or api-batch: an API key with the send scope (or RICHPUSH_API_KEY); without one, Basic auth as --user.")
    var apiKey: String?
    @Option(help: "With --via api or api-batch: keep-alive HTTP connections to the API.") var connections = 32
    @Option(help: "With --via api-batch: notifications per request (1 to 1000).") var batchSize = 500
    @Option(help: "With --via nh or nh-batch: the hub's connection string (or RICHPUSH_NH_CONNECTION_STRING), its Send rule's at least.")
    var nhConnectionString: String?
    @Option(help: "With --via nh or nh-batch: the hub (the app the devices register in).") var nhHub = "default"
    @Option(help: "With --via nh or nh-batch: the CA certificate (PEM) the listener's certificate is checked against.") var nhCAFile:
        String?
    @Option(help: "Notifications to send.") var notifications = 100_000
    @Option(help: "Simulated devices.") var devices = 1000
    @Option(help: "silent: count pushes delivered; rich: the whole flow with the background fetch.") var mode: Mode = .silent
    @Option(
        help:
            "one: each notification to one device (its own tag); all: each to every device (one fan-out to one large tag per notification)."
    ) var audience: Audience = .one
    @Option(
        help:
            "Shape of load: max (as fast as possible), constant (--rate), ramp (0 up to --rate), burst (--burst-size every --burst-interval). Default: constant when --rate is given, else max."
    ) var shape: LoadShape?
    @Option(help: "Notifications per second for constant, peak for ramp.") var rate = 0
    @Option(help: "Notifications per burst.") var burstSize = 1000
    @Option(help: "Seconds between bursts.") var burstInterval: Double = 1
    @Option(help: "Seconds to wait for the last deliveries.") var timeout: Double = 300
    @Option(help: "Seconds, after the last delivery, to wait for the workers' last acknowledgements before counting each worker's share.")
    var settleTimeout: Double = 30
    @Option(help: "Write the report as JSON here.") var json: String?
    @Option(help: "Write report.json, report.html and overview.svg into this directory.") var report: String?
    @Option(help: "A process to sample for the report, as name=pid (repeatable); this process is sampled as 'loadtest'.") var watchPid:
        [String] = []
    @Option(help: "Worker processes serving the run, for the report.") var workers = 0
    @Option(help: "Seconds between samples of the timeline.") var sampleInterval: Double = 1
    @Option(
        help:
            "A Redis URL (repeatable) whose statistics start over once the devices are registered (CONFIG RESETSTAT, and SLOWLOG RESET): its command counts are then the notifications' alone."
    ) var resetStatsAt: [String] = []

    var effectiveShape: LoadShape { shape ?? (rate > 0 ? .constant : .max) }

    func validate() throws {
        guard notifications > 0, devices > 0 else { throw ValidationError("--notifications and --devices must be positive") }
        guard rate >= 0 else { throw ValidationError("--rate must not be negative") }
        if [.constant, .ramp].contains(effectiveShape) && rate == 0 {
            throw ValidationError("--shape \(effectiveShape.rawValue) needs --rate > 0")
        }
        if effectiveShape == .burst && (burstSize <= 0 || burstInterval <= 0) {
            throw ValidationError("--shape burst needs --burst-size and --burst-interval > 0")
        }
        guard (1...1024).contains(connections) else { throw ValidationError("--connections must be 1 to 1024") }
        guard (1...1000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 1000 (a batch's limit)") }
        if via == .nh || via == .nhBatch {
            // An NH sender numbers its notifications itself: a device fetching by that number would ask RichPush for an id it never made.
            guard mode == .silent else { throw ValidationError("--via \(via.rawValue) runs with --mode silent") }
        }
        if via == .nhBatch {
            guard audience == .all, devices <= 1000 else {
                throw ValidationError(
                    "--via nh-batch sends each notification to every device's handle: give --audience all and at most 1000 --devices")
            }
        }
        guard (0...3600).contains(settleTimeout) else { throw ValidationError("--settle-timeout must be 0 to 3600 seconds") }
        guard sampleInterval >= 0.1 else { throw ValidationError("--sample-interval must be at least 0.1 seconds") }
        for url in resetStatsAt {
            do { _ = try RedisConfiguration(url: url) } catch { throw ValidationError("--reset-stats-at '\(url)': \(error)") }
        }
        for argument in watchPid where ProcessProbe(argument: argument) == nil {
            throw ValidationError("--watch-pid '\(argument)' is not name=pid")
        }
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        guard let secret = password ?? ProcessInfo.processInfo.environment["RICHPUSH_PASSWORD"] else {
            throw CLIError("give --password or set RICHPUSH_PASSWORD")
        }
        let redisConfiguration = try redis.configuration(clientName: "richpush-loadtest")
        var simulatorConfiguration = SimulatorConfiguration(
            apiBaseURL: URL(string: api)!, user: user, password: secret, devices: devices, appState: .active, tap: .none,
            fireDelay: .zero, redis: redisConfiguration, hubPrefix: queue.prefix,
            handlePrefix: "load-\(ProcessInfo.processInfo.processIdentifier)",
            sendReceipts: false)
        simulatorConfiguration.fetch = mode == .rich
        if redis.isCluster {
            simulatorConfiguration.cluster = RedisClusterClient(
                configuration: try redis.clusterConfiguration(clientName: "richpush-loadtest-devices"))
        }
        let tracker = LoadTracker(expected: notifications * (audience == .all ? devices : 1))
        // Events go straight to the tracker from each device's task: one consumer of the event
        // stream capped fan-out runs near 33,000 events/s and buffered the rest (10 GiB).
        simulatorConfiguration.eventSink = { event in
            guard let id = event.richId.flatMap(Int.init) else { return }
            switch event.event {
            case "received": tracker.received(id, device: event.device)
            case "alert": tracker.notified(id, device: event.device)
            case "failed": tracker.failed()
            default: break
            }
        }
        let simulator = try DeviceSimulator(configuration: simulatorConfiguration)
        let tagPrefix = "load\(ProcessInfo.processInfo.processIdentifier)-"
        progress("registering \(devices) devices")
        try await simulator.start { ["\(tagPrefix)\($0)", "\(tagPrefix)all"] }
        try await Self.resetStatistics(at: resetStatsAt)

        // A pool on one Redis, a cluster client on a cluster; the store spreads the notifications
        // over --partitions as the API does.
        let backend = try redis.backend(clientName: "richpush-loadtest", connections: 2, logger: Logger(label: "richpush.loadtest"))
        let store = RedisNotificationStore(
            redis: backend, keys: queue.storageKeys(redis), queue: JobQueue(redis: backend, configuration: queue.configuration),
            retention: .seconds(3600), idBlock: 1000)
        let payload = [UInt8](repeating: 0x42, count: 1024)
        let creator: any NotificationCreator
        switch via {
        case .store:
            creator = StoreCreator(store: store, user: user, payload: payload)
        case .nh, .nhBatch:
            guard let text = nhConnectionString ?? ProcessInfo.processInfo.environment["RICHPUSH_NH_CONNECTION_STRING"] else {
                throw CLIError("--via \(via.rawValue) needs --nh-connection-string or RICHPUSH_NH_CONNECTION_STRING")
            }
            let connectionString: NHConnectionString
            do { connectionString = try NHConnectionString(parsing: text) } catch { throw CLIError("--nh-connection-string: \(error)") }
            creator = try NHCreator(
                connectionString: connectionString, hub: nhHub, caFile: nhCAFile,
                handles: via == .nhBatch ? (0..<devices).map(simulatorConfiguration.handle(of:)) : nil, connections: connections)
        case .api, .apiBatch:
            let key = apiKey ?? ProcessInfo.processInfo.environment["RICHPUSH_API_KEY"]
            let authorization = key.map { "Bearer \($0)" } ?? "Basic " + Data("\(user):\(secret)".utf8).base64EncodedString()
            creator =
                via == .api
                ? APICreator(baseURL: api, authorization: authorization, payload: payload, connections: connections)
                : BatchAPICreator(
                    baseURL: api, authorization: authorization, payload: payload, connections: connections, batchSize: batchSize)
        }
        let runner = Task { try await simulator.run() }
        let processedBefore = (try? await QueueStats.read(store.queues).processedByConsumer) ?? [:]
        let probes = [ProcessProbe(name: "loadtest", pid: getpid())] + watchPid.compactMap(ProcessProbe.init(argument:))
        // The sampler runs on its own connection's thread: on the cooperative pool, busy with
        // the devices' work, its ticks came late or not at all in the heaviest runs.
        // On a cluster the connection is only the sampler's thread; its reads go by the backend.
        let samplerConnection = RedisConnection(configuration: redisConfiguration)
        let samplerClient: any RedisClient = redis.isCluster ? backend : samplerConnection
        let sampler = LoadSampler(
            tracker: tracker, queues: queue.partitionConfigurations.map { JobQueue(redis: samplerClient, configuration: $0) },
            probes: probes, interval: .seconds(sampleInterval))
        let startedAt = Date()
        let clock = ContinuousClock()
        let start = clock.now
        let sampling = Task { await withTaskExecutorPreference(samplerConnection) { await sampler.run(start: start) } }
        progress("sending \(notifications) notifications (\(mode.rawValue), shape \(effectiveShape.rawValue), via \(via.rawValue))")
        do {
            try await send(creator, tracker: tracker, tagPrefix: tagPrefix, start: start)
        } catch {
            await creator.shutdown()
            throw error
        }
        await creator.shutdown()
        if creator.retried > 0 { progress("\(creator.retried) creates answered 503 or 429 (Retry-After) were sent again") }

        let deadline = clock.now + .seconds(timeout)
        let goal: (LoadTracker) -> Bool = mode == .rich ? { $0.counts.notified >= $0.expected } : { $0.counts.delivered >= $0.expected }
        while !goal(tracker) && clock.now < deadline {
            tracker.printProgress(elapsed: clock.now - start)
            try await Task.sleep(for: .milliseconds(200))
        }
        // Give duplicates, if any, a moment to show up before counting.
        try await Task.sleep(for: .milliseconds(500))
        // A worker counts its jobs when it acknowledges them, after their pushes went out (a
        // batch's after its last push): up to --settle-timeout (30 s) more for the jobs taken and
        // not yet acknowledged, or a busy machine's last acks miss the workers' shares. A read
        // that fails (a busy Redis) is not a settled queue: it is read again.
        let settled = min(deadline, clock.now + .milliseconds(Int(settleTimeout * 1000)))
        while clock.now < settled {
            if let stats = try? await QueueStats.read(store.queues), stats.waiting + stats.lag + stats.pending == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        tracker.printProgress(elapsed: clock.now - start)
        FileHandle.standardError.write(Data("\n".utf8))
        let elapsed = (tracker.lastEvent ?? clock.now) - start
        sampling.cancel()
        await sampling.value
        await samplerConnection.close()
        let processedAfter = (try? await QueueStats.read(store.queues).processedByConsumer) ?? [:]
        await simulator.stop()
        _ = try? await runner.value
        await backend.close()
        await simulatorConfiguration.cluster?.close()

        let shares = processedAfter.map { WorkerShare(consumer: $0.key, jobs: $0.value - (processedBefore[$0.key] ?? 0)) }
            .filter { $0.jobs > 0 }.sorted { $0.consumer < $1.consumer }
        let result = LoadReport(
            settings: Settings(
                mode: mode.rawValue, audience: audience.rawValue, shape: effectiveShape.rawValue, notifications: notifications,
                devices: devices, workers: workers > 0 ? workers : shares.count, rate: rate,
                startedAt: ISO8601DateFormatter().string(from: startedAt),
                command: CommandLine.arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " "), via: via.rawValue),
            summary: tracker.summary(elapsed: elapsed), timeline: sampler.timeline, histogram: tracker.histogram,
            workers: shares, processes: sampler.processSummaries())
        try write(result)
        print(SummaryText.render(result))
    }

    /// Creates the notifications on the shape's schedule, a step at a time, each step in parallel
    /// (in calls of the creator's batch size: a batch creator's step holds whole batches, as
    /// many as there are connections when as fast as possible).
    private func send(
        _ creator: any NotificationCreator, tracker: LoadTracker, tagPrefix: String, start: ContinuousClock.Instant
    ) async throws {
        let parameters = LoadShape.Parameters(notifications: notifications, rate: rate, burstSize: burstSize, burstInterval: burstInterval)
        let shape = effectiveShape
        let perCall = creator.batchSize
        let step = perCall == 1 ? shape.step(parameters) : max(shape.step(parameters), perCall * (shape == .max ? connections : 1))
        var sent = 0
        var lastProgress = ContinuousClock.now
        while sent < notifications {
            let due = start + .seconds(shape.due(sent, parameters))
            if ContinuousClock.now < due { try await Task.sleep(until: due, clock: .continuous) }
            let batch = min(step, notifications - sent)
            let first = sent
            let (devices, audience) = (self.devices, self.audience)
            try await withThrowingDiscardingTaskGroup { group in
                for offset in stride(from: 0, to: batch, by: perCall) {
                    let items = (first + offset..<first + min(offset + perCall, batch)).map { index in
                        (index: index, target: audience == .all ? "\(tagPrefix)all" : "\(tagPrefix)\(index % devices)")
                    }
                    group.addTask {
                        let started = ContinuousClock.now
                        for id in try await creator.create(items) { tracker.enqueued(id, at: started) }
                    }
                }
            }
            sent += batch
            if ContinuousClock.now - lastProgress > .milliseconds(200) {
                lastProgress = .now
                tracker.printProgress(elapsed: ContinuousClock.now - start)
            }
        }
    }

    private func write(_ result: LoadReport) throws {
        if let json { try result.jsonData().write(to: URL(fileURLWithPath: json)) }
        guard let report else { return }
        let directory = URL(fileURLWithPath: report, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try result.jsonData().write(to: directory.appendingPathComponent("report.json"))
        try Data(HTMLReport.render(result).utf8).write(to: directory.appendingPathComponent("report.html"))
        try Data(OverviewSVG.render(result).utf8).write(to: directory.appendingPathComponent("overview.svg"))
        progress("report written to \(directory.path)/report.html (and report.json, overview.svg)")
    }

    private func progress(_ text: String) {
        FileHandle.standardError.write(Data("loadtest: \(text)\n".utf8))
    }
}
