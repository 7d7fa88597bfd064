import ArgumentParser
import Foundation
import Hiredis
import Logging
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import RichPushReport

/// `richpush loadtest`: the referee of scripts/loadtest.sh. Registers M simulated devices (each
/// with a tag of its own) through the API, creates N notifications addressed one device each or
/// all of them (through the store: record + payload + job, as the API does) in the chosen shape
/// of load, and measures what the devices see. Workers and the API run as their own processes,
/// started by the script; `--report DIR` writes report.json, report.html and overview.svg.
struct LoadTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "loadtest", abstract: "Drive the full pipeline with simulated devices and print throughput, latency, lost and duplicated.")

    enum Mode: String, ExpressibleByArgument, CaseIterable { case silent, rich }
    enum Audience: String, ExpressibleByArgument, CaseIterable { case one, all }

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Base URL of the API.") var api = "http://127.0.0.1:8080"
    @Option(help: "User the devices register as (an admin, to address devices by tag).") var user: String
    @Option(help: "Password (or RICHPUSH_PASSWORD).") var password: String?
    @Option(help: "Notifications to send.") var notifications = 100_000
    @Option(help: "Simulated devices.") var devices = 1000
    @Option(help: "silent: count pushes delivered; rich: the whole flow with the background fetch.") var mode: Mode = .silent
    @Option(help: "one: each notification to one device (its own tag); all: each to every device (one fan-out to one large tag per notification).") var audience: Audience = .one
    @Option(help: "Shape of load: max (as fast as possible), constant (--rate), ramp (0 up to --rate), burst (--burst-size every --burst-interval). Default: constant when --rate is given, else max.") var shape: LoadShape?
    @Option(help: "Notifications per second for constant, peak for ramp.") var rate = 0
    @Option(help: "Notifications per burst.") var burstSize = 1000
    @Option(help: "Seconds between bursts.") var burstInterval: Double = 1
    @Option(help: "Seconds to wait for the last deliveries.") var timeout: Double = 300
    @Option(help: "Write the report as JSON here.") var json: String?
    @Option(help: "Write report.json, report.html and overview.svg into this directory.") var report: String?
    @Option(help: "A process to sample for the report, as name=pid (repeatable); this process is sampled as 'loadtest'.") var watchPid: [String] = []
    @Option(help: "Worker processes serving the run, for the report.") var workers = 0
    @Option(help: "Seconds between samples of the timeline.") var sampleInterval: Double = 1

    var effectiveShape: LoadShape { shape ?? (rate > 0 ? .constant : .max) }

    func validate() throws {
        guard notifications > 0, devices > 0 else { throw ValidationError("--notifications and --devices must be positive") }
        guard rate >= 0 else { throw ValidationError("--rate must not be negative") }
        if [.constant, .ramp].contains(effectiveShape) && rate == 0 { throw ValidationError("--shape \(effectiveShape.rawValue) needs --rate > 0") }
        if effectiveShape == .burst && (burstSize <= 0 || burstInterval <= 0) { throw ValidationError("--shape burst needs --burst-size and --burst-interval > 0") }
        guard sampleInterval >= 0.1 else { throw ValidationError("--sample-interval must be at least 0.1 seconds") }
        for argument in watchPid where ProcessProbe(argument: argument) == nil {
            throw ValidationError("--watch-pid '\(argument)' is not name=pid")
        }
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        guard let secret = password ?? ProcessInfo.processInfo.environment["RICHPUSH_PASSWORD"] else { throw CLIError("give --password or set RICHPUSH_PASSWORD") }
        let redisConfiguration = try redis.configuration(clientName: "richpush-loadtest")
        var simulatorConfiguration = SimulatorConfiguration(
            apiBaseURL: URL(string: api)!, user: user, password: secret, devices: devices, appState: .active, tap: .none,
            fireDelay: .zero, redis: redisConfiguration, hubPrefix: queue.prefix, handlePrefix: "load-\(ProcessInfo.processInfo.processIdentifier)",
            sendReceipts: false)
        simulatorConfiguration.fetch = mode == .rich
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

        let pool = RedisConnectionPool(configuration: redisConfiguration, size: 2)
        let jobQueue = JobQueue(redis: pool, configuration: queue.configuration)
        let store = RedisNotificationStore(redis: pool, keys: queue.storageKeys(redis), queue: jobQueue, retention: .seconds(3600), idBlock: 1000)
        let runner = Task { try await simulator.run() }
        let processedBefore = (try? await jobQueue.stats().processedByConsumer) ?? [:]
        let probes = [ProcessProbe(name: "loadtest", pid: getpid())] + watchPid.compactMap(ProcessProbe.init(argument:))
        // The sampler runs on its own connection's thread: on the cooperative pool, busy with
        // the devices' work, its ticks came late or not at all in the heaviest runs.
        let samplerConnection = RedisConnection(configuration: redisConfiguration)
        let sampler = LoadSampler(tracker: tracker, queue: JobQueue(redis: samplerConnection, configuration: queue.configuration),
                                  probes: probes, interval: .seconds(sampleInterval))
        let startedAt = Date()
        let clock = ContinuousClock()
        let start = clock.now
        let sampling = Task { await withTaskExecutorPreference(samplerConnection) { await sampler.run(start: start) } }
        progress("sending \(notifications) notifications (\(mode.rawValue), shape \(effectiveShape.rawValue))")
        try await send(store: store, tracker: tracker, tagPrefix: tagPrefix, start: start)

        let deadline = clock.now + .seconds(timeout)
        let goal: (LoadTracker) -> Bool = mode == .rich ? { $0.counts.notified >= $0.expected } : { $0.counts.delivered >= $0.expected }
        while !goal(tracker) && clock.now < deadline {
            tracker.printProgress(elapsed: clock.now - start)
            try await Task.sleep(for: .milliseconds(200))
        }
        // Give duplicates, if any, a moment to show up before counting.
        try await Task.sleep(for: .milliseconds(500))
        tracker.printProgress(elapsed: clock.now - start)
        FileHandle.standardError.write(Data("\n".utf8))
        let elapsed = (tracker.lastEvent ?? clock.now) - start
        sampling.cancel()
        await sampling.value
        await samplerConnection.close()
        let processedAfter = (try? await jobQueue.stats().processedByConsumer) ?? [:]
        await simulator.stop()
        _ = try? await runner.value
        await pool.close()

        let shares = processedAfter.map { WorkerShare(consumer: $0.key, jobs: $0.value - (processedBefore[$0.key] ?? 0)) }
            .filter { $0.jobs > 0 }.sorted { $0.consumer < $1.consumer }
        let result = LoadReport(
            settings: Settings(mode: mode.rawValue, audience: audience.rawValue, shape: effectiveShape.rawValue, notifications: notifications,
                               devices: devices, workers: workers > 0 ? workers : shares.count, rate: rate,
                               startedAt: ISO8601DateFormatter().string(from: startedAt),
                               command: CommandLine.arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")),
            summary: tracker.summary(elapsed: elapsed), timeline: sampler.timeline, histogram: tracker.histogram,
            workers: shares, processes: sampler.processSummaries())
        try write(result)
        print(SummaryText.render(result))
    }

    /// Creates the notifications on the shape's schedule, a step at a time, each step in parallel.
    private func send(store: RedisNotificationStore, tracker: LoadTracker, tagPrefix: String, start: ContinuousClock.Instant) async throws {
        let parameters = LoadShape.Parameters(notifications: notifications, rate: rate, burstSize: burstSize, burstInterval: burstInterval)
        let shape = effectiveShape
        let step = shape.step(parameters)
        let payload = [UInt8](repeating: 0x42, count: 1024)
        var sent = 0
        var lastProgress = ContinuousClock.now
        while sent < notifications {
            let due = start + .seconds(shape.due(sent, parameters))
            if ContinuousClock.now < due { try await Task.sleep(until: due, clock: .continuous) }
            let batch = min(step, notifications - sent)
            let first = sent
            let (devices, user, audience) = (self.devices, self.user, self.audience)
            try await withThrowingDiscardingTaskGroup { group in
                for offset in 0..<batch {
                    let device = (first + offset) % devices
                    let draft = NotificationDraft(message: "load \(first + offset)", richType: .image, contentType: "image/png",
                                                  payload: payload, creator: user, target: audience == .all ? "\(tagPrefix)all" : "\(tagPrefix)\(device)")
                    group.addTask {
                        let record = try await store.create(draft) { _ in "load-payload" }
                        tracker.enqueued(record.id)
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

extension Duration {
    var milliseconds: Double { seconds * 1000 }
}
