import ArgumentParser
import Foundation
import Hiredis
import Logging
import RichPushBench
import RichPushCommands
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import Synchronization

/// `richpush bench fairness`: the load generator and referee of scripts/bench-fairness.sh (issue
/// 28). One phase of load from several apps at once against a running API and workers: each
/// app's simulated devices register through the API (as `<user>@<app>`) and listen on the hub;
/// an app floods (as many notifications as it can, in batches, for `--seconds`), sends single-device
/// notifications at a set rate, or sends one fan-out to a large tag; each push is timed from the
/// start of its create call to its arrival at the device. Writes the figures as JSON.
struct BenchFairnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fairness",
        abstract: "Load from several apps at once (flood, set rate, fan-out); per-app throughput and create→device latency as JSON.",
        discussion: """
            Each app named by --flood, --rate or --fanout needs a user <user>@<app> (admin, the password \
            in --password or RICHPUSH_PASSWORD) and an API key with the send scope (--api-key APP=TOKEN). \
            Its devices are tagged <tag-prefix>-<app>-<n>; a flood and a rate address them in turn, one \
            device a notification. "Sent" is the device's receipt: the hub published it (or apns-sim \
            accepted and forwarded it). --register-audience APP=TAG:N first writes N installations of \
            APP under TAG straight into Redis (offline: the hub holds their pushes); with no load given, \
            it only registers. Example (scripts/bench-fairness.sh runs it so):
              richpush bench fairness --api http://127.0.0.1:8080 --api-key app-a=$KEY_A --api-key app-b=$KEY_B \\
                --platform app-a=apns --flood app-a --rate app-b=1 --seconds 60 --json flood.json
            """)

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Base URL of the API.") var api = "http://127.0.0.1:8080"
    @Option(help: "User of each app the devices register as (<user>@<app>).") var user = "load"
    @Option(help: "Its password (or RICHPUSH_PASSWORD).") var password: String?
    @Option(help: "An app's API key with the send scope, as APP=TOKEN (repeat for each app).") var apiKey: [String] = []
    @Option(help: "An app that creates as many notifications as it can for --seconds (repeatable).") var flood: [String] = []
    @Option(help: "APP=R: the app creates R single-device notifications a second for --seconds (repeatable).") var rate: [String] = []
    @Option(
        help:
            "APP=TAG: the app sends one notification to TAG at the start; the phase lasts until every device of it has an outcome (at least --seconds)."
    )
    var fanout: String?
    @Option(help: "APP=TAG:N: write N installations of APP under TAG into Redis first (skipped when the tag has them).")
    var registerAudience: [String] = []
    @Option(help: "Seconds the floods and rates run.") var seconds: Double = 60
    @Option(help: "Seconds to wait after the load for what it created to arrive.") var drainTimeout: Double = 180
    @Flag(
        help:
            "After the drain, drop the jobs still waiting (not sent: a benchmark's reset) and wait for those in flight, so the next phase starts on an empty queue."
    )
    var skipBacklog = false
    @Option(help: "APP=N: simulated devices of the app (default 200 for a flooding app, 4 for the others).") var devices: [String] = []
    @Option(
        help: "APP=apns|fcm: the platform of the app's devices (apns: 64-hex APNs tokens, for --adapter apns and apns-sim; default fcm).")
    var platform: [String] = []
    @Option(help: "Notifications per POST /api/notifications/batch of a flood.") var batchSize = 100
    @Option(help: "Keep-alive connections of each flooding app.") var connections = 8
    @Option(help: "Devices' tags are <tag-prefix>-<app>-<n>.") var tagPrefix = "fair"
    @Option(help: "Write the figures here as JSON (else to standard output).") var json: String?
    @Flag(
        help:
            "Pause the loaded apps while the load runs and resume them together at its end: each then has a backlog, and their throughputs are counted from the resume until the first has nothing left (the contested window; fair scheduling only)."
    )
    var holdLoad = false

    func validate() throws {
        guard seconds > 0, drainTimeout >= 0 else { throw ValidationError("--seconds must be positive, --drain-timeout not negative") }
        guard (1...1000).contains(batchSize), (1...256).contains(connections) else {
            throw ValidationError("--batch-size is 1 to 1000, --connections 1 to 256")
        }
        for app in flood where AppID(validating: app) == nil { throw ValidationError("--flood '\(app)' is not an app id") }
        for pair in rate where Self.pair(pair).flatMap({ Int($0.1) }).map({ $0 > 0 }) != true {
            throw ValidationError("--rate '\(pair)' is not APP=R with R > 0")
        }
        if let fanout, Self.pair(fanout) == nil { throw ValidationError("--fanout '\(fanout)' is not APP=TAG") }
        for argument in registerAudience where FanOutAudience(argument: argument, owner: user) == nil {
            throw ValidationError("--register-audience '\(argument)' is not APP=TAG:N")
        }
        for pair in devices where Self.pair(pair).flatMap({ Int($0.1) }).map({ $0 > 0 }) != true {
            throw ValidationError("--devices '\(pair)' is not APP=N")
        }
        for pair in platform where !["apns", "fcm"].contains(Self.pair(pair)?.1 ?? "") {
            throw ValidationError("--platform '\(pair)' is not APP=apns|fcm")
        }
        for app in loadedApps where keys[app] == nil { throw ValidationError("app \(app) sends: give --api-key \(app)=TOKEN") }
        if holdLoad, queue.schedulingName != JobScheduling.fair.rawValue {
            throw ValidationError("--hold-load pauses apps: it needs --scheduling fair")
        }
    }

    /// `APP=VALUE` split, with a valid app id.
    static func pair(_ text: String) -> (String, String)? {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, AppID(validating: parts[0]) != nil, !parts[1].isEmpty else { return nil }
        return (parts[0], parts[1])
    }

    var rates: [String: Int] {
        Dictionary(rate.compactMap { Self.pair($0) }.compactMap { pair in Int(pair.1).map { (pair.0, $0) } }) { $1 }
    }
    var keys: [String: String] { Dictionary(apiKey.compactMap { Self.pair($0) }) { $1 } }
    var fanOut: (app: String, tag: String)? { fanout.flatMap { Self.pair($0) }.map { (app: $0.0, tag: $0.1) } }
    var loadedApps: [String] { Array(Set(flood + rates.keys + [fanOut?.app].compactMap { $0 })).sorted() }

    func deviceCount(_ app: String) -> Int {
        Dictionary(devices.compactMap { Self.pair($0) }) { $1 }[app].flatMap { Int($0) } ?? (flood.contains(app) ? 200 : 4)
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        let logger = Logger(label: "richpush.bench.fairness")
        guard let secret = password ?? ProcessInfo.processInfo.environment["RICHPUSH_PASSWORD"] else {
            throw CLIError("give --password or set RICHPUSH_PASSWORD")
        }
        let backend = try redis.backend(clientName: "richpush-bench-fairness", connections: 4, logger: logger)
        for argument in registerAudience {
            guard let audience = FanOutAudience(argument: argument, owner: user) else { continue }
            let written = try await audience.register(
                redis: backend.client, keys: storageKeys(audience.app.rawValue), progress: Self.progress)
            if written > 0 { Self.progress("registered \(written) installations of \(audience.app) under \(audience.tag)") }
        }
        guard !loadedApps.isEmpty else { await backend.close(); return }

        // Devices first (registration through the API), then the clock starts.
        var simulators: [String: DeviceSimulator] = [:]
        let deferredRecorders = RecorderBox()
        for app in loadedApps {
            var configuration = SimulatorConfiguration(
                apiBaseURL: URL(string: api)!, user: "\(user)@\(app)", password: secret, devices: deviceCount(app), appState: .active,
                tap: .none,
                fireDelay: .zero, redis: try redis.configuration(clientName: "richpush-bench-devices"), hubPrefix: queue.prefix,
                handlePrefix: "\(tagPrefix)-\(app)", sendReceipts: false)
            configuration.fetch = false
            let apns = Dictionary(platform.compactMap { Self.pair($0) }) { $1 }[app] == "apns"
            configuration.platforms = apns ? .apns : .fcm
            configuration.apnsTokens = apns
            configuration.eventSink = { event in
                guard event.event == "received", let id = event.richId.flatMap(Int.init) else { return }
                deferredRecorders.recorder(app)?.received(id)
            }
            let simulator = try DeviceSimulator(configuration: configuration)
            let prefix = "\(tagPrefix)-\(app)-"
            Self.progress("registering \(deviceCount(app)) devices of app \(app)")
            try await simulator.start { ["\(prefix)\($0)"] }
            simulators[app] = simulator
        }
        let runners = simulators.values.map { simulator in Task { try await simulator.run() } }
        // Let the subscriptions settle and any push held from an earlier phase arrive before the clock starts.
        try await Task.sleep(for: .milliseconds(500))

        let start = ContinuousClock.now
        let recorders = Dictionary(
            uniqueKeysWithValues: loadedApps.map { ($0, AppLoadRecorder(app: $0, start: start, keepsSamples: rates[$0] != nil)) })
        deferredRecorders.set(recorders)
        let counts = Dictionary(uniqueKeysWithValues: loadedApps.map { ($0, deviceCount($0)) })
        let prefix = tagPrefix
        let load = FairnessLoad(
            api: api, keys: keys, recorders: recorders, batchSize: batchSize, connections: connections,
            tag: { app, index in "\(prefix)-\(app)-\(index % (counts[app] ?? 1))" })
        Self.progress("load: \(describe()) for \(seconds) s")
        let target = fanOut.map { (app: $0.app, tag: $0.tag, keys: storageKeys($0.app)) }
        let held = queue.partitionConfigurations.map { JobQueue(redis: backend.client, configuration: $0) }
        if holdLoad { _ = try await JobQueue.setPaused(true, apps: loadedApps, in: held) }
        let fanOutResult = try await load.run(seconds: seconds, floods: flood, rates: rates, fanOut: target, redis: backend.client)
        let loadEnded = ContinuousClock.now
        var contested: ContestedWindow?
        if holdLoad {
            contested = try await ContestedWindow.measure(
                resuming: loadedApps, in: held, recorders: recorders, limit: .seconds(drainTimeout))
        }
        let deadline = loadEnded + .seconds(drainTimeout)
        while ContinuousClock.now < deadline, !recorders.values.allSatisfy(\.isComplete) { try await Task.sleep(for: .milliseconds(100)) }
        let drained = (ContinuousClock.now - loadEnded) / .seconds(1)
        var skipped = 0
        if skipBacklog {
            let queues = queue.partitionConfigurations
            skipped = try await QueueBacklogSkip.run(queues, redis: backend.client)
            let settle = ContinuousClock.now + .seconds(60)
            while try await QueueBacklogSkip.inFlight(queues, redis: backend.client) > 0, ContinuousClock.now < settle {
                try await Task.sleep(for: .milliseconds(100))
            }
            if skipped > 0 { Self.progress("dropped \(skipped) jobs still waiting after the drain (not sent)") }
        }
        // A moment for duplicates, if any, before counting.
        try await Task.sleep(for: .milliseconds(300))
        for simulator in simulators.values { await simulator.stop() }
        for runner in runners { _ = try? await runner.value }
        await load.shutdown()
        await backend.close()

        let window = fanOutResult.map { max(seconds, $0.seconds) } ?? seconds
        let apps = loadedApps.map { app in
            recorders[app]!.result(window: window, roles: roles(of: app), rate: rates[app], retried: load.retried(app))
        }
        // The API keys stay out of the report.
        let command = CommandLine.arguments.map { $0.contains("rpk_") ? ($0.split(separator: "=").first.map { "\($0)=KEY" } ?? "KEY") : $0 }
        let result = FairnessPhaseResult(
            command: command.joined(separator: " "),
            scheduling: queue.schedulingName, seconds: window, drainSeconds: drained, skippedJobs: skipped,
            apps: apps, fanOut: fanOutResult, contested: contested)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(result)
        if let json { try data.write(to: URL(fileURLWithPath: json)) } else { print(String(decoding: data, as: UTF8.self)) }
        for app in apps {
            var latency = app.latencyMs.map { String(format: "p50 %.1f ms, p99 %.1f ms", $0.p50, $0.p99) } ?? "no latency"
            if let call = app.createCallMs { latency += String(format: " (the create call p50 %.1f ms, p99 %.1f ms)", call.p50, call.p99) }
            if let after = app.afterAnswerMs {
                latency += String(format: ", after its answer p50 %.1f ms, p99 %.1f ms", after.p50, after.p99)
            }
            Self.progress(
                "\(app.app) (\(app.roles.joined(separator: "+"))): created \(app.created), received \(app.received) "
                    + "(\(app.receivedInWindow) in the window, \(Int(app.throughput))/s), \(latency), undelivered \(app.undelivered)")
        }
        if let contested {
            Self.progress(
                String(format: "contested window %.2f s: ", contested.seconds)
                    + contested.throughput.sorted { $0.key < $1.key }.map { "\($0.key) \(Int($0.value))/s" }.joined(separator: ", "))
        }
        if let fanOutResult {
            Self.progress(
                "fan-out: \(fanOutResult.outcomes) of \(fanOutResult.devices) devices in \(String(format: "%.2f s (%.0f pushes/s)", fanOutResult.seconds, fanOutResult.pushesPerSecond))"
            )
        }
    }

    private func storageKeys(_ app: String) -> StorageKeys {
        StorageKeys(
            prefix: queue.prefix, partition: queue.partition, partitions: queue.partitions, clusterSafe: redis.isCluster,
            app: AppID(validating: app) ?? .default)
    }

    private func roles(of app: String) -> [String] {
        (flood.contains(app) ? ["flood"] : []) + (rates[app] != nil ? ["rate"] : []) + (fanOut?.app == app ? ["fanout"] : [])
    }

    private func describe() -> String {
        (flood.map { "\($0) floods" } + rates.sorted { $0.key < $1.key }.map { "\($0.key) at \($0.value)/s" }
            + [fanOut.map { "\($0.app) fans out to \($0.tag)" }].compactMap { $0 })
            .joined(separator: ", ")
    }

    private static func progress(_ text: String) {
        FileHandle.standardError.write(Data("bench fairness: \(text)\n".utf8))
    }
}

/// The recorders, set once the clock starts; a receipt before that (a push held from an earlier
/// phase) has no recorder and is ignored.
private final class RecorderBox: Sendable {
    private let recorders = Mutex<[String: AppLoadRecorder]>([:])
    func set(_ value: [String: AppLoadRecorder]) { recorders.withLock { $0 = value } }
    func recorder(_ app: String) -> AppLoadRecorder? { recorders.withLock { $0[app] } }
}

/// A phase's figures, as scripts/bench-fairness.sh reads them.
struct FairnessPhaseResult: Codable, Sendable {
    var command: String
    var scheduling: String
    /// The window the throughputs count over.
    var seconds: Double
    /// Seconds after the load until everything created had arrived (or the drain timed out).
    var drainSeconds: Double
    /// Jobs dropped after the drain (--skip-backlog): created, never sent.
    var skippedJobs: Int
    var apps: [AppLoadResult]
    var fanOut: FanOutResult?
    /// With --hold-load: the apps' throughputs while all had a backlog.
    var contested: ContestedWindow?
}
