import ArgumentParser
import Foundation
import Hiredis
import Logging
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import Synchronization

/// `richpush loadtest`: the referee of scripts/loadtest.sh. Registers M simulated devices (each
/// with a tag of its own) through the API, creates N notifications addressed one device each
/// (through the store: record + payload + job, as the API does), and measures what the devices
/// see. Workers and the API run as their own processes, started by the script.
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
    @Option(help: "one: each notification to one device (its own tag); all: each to every device (one fan-out per notification).") var audience: Audience = .one
    @Option(help: "Create at most this many notifications per second (0: as fast as possible).") var rate = 0
    @Option(help: "Seconds to wait for the last deliveries.") var timeout: Double = 300
    @Option(help: "Write the figures as JSON here.") var json: String?

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        guard let secret = password ?? ProcessInfo.processInfo.environment["RICHPUSH_PASSWORD"] else { throw CLIError("give --password or set RICHPUSH_PASSWORD") }
        let redisConfiguration = try redis.configuration(clientName: "richpush-loadtest")
        var simulatorConfiguration = SimulatorConfiguration(
            apiBaseURL: URL(string: api)!, user: user, password: secret, devices: devices, appState: .active, tap: .none,
            fireDelay: .zero, redis: redisConfiguration, hubPrefix: queue.prefix, handlePrefix: "load-\(ProcessInfo.processInfo.processIdentifier)",
            sendReceipts: false)
        simulatorConfiguration.fetch = mode == .rich
        let simulator = DeviceSimulator(configuration: simulatorConfiguration)
        let tagPrefix = "load\(ProcessInfo.processInfo.processIdentifier)-"
        progress("registering \(devices) devices")
        try await simulator.start { ["\(tagPrefix)\($0)", "\(tagPrefix)all"] }

        let pool = RedisConnectionPool(configuration: redisConfiguration, size: 2)
        let jobQueue = JobQueue(redis: pool, configuration: queue.configuration)
        let store = RedisNotificationStore(redis: pool, keys: queue.storageKeys, queue: jobQueue, retention: .seconds(3600), idBlock: 1000)
        let tracker = Tracker(expected: notifications * (audience == .all ? devices : 1))
        let events = Task {
            for await event in simulator.events {
                guard let id = event.richId.flatMap(Int.init) else { continue }
                switch event.event {
                case "received": tracker.received(id, device: event.device)
                case "alert": tracker.notified(id, device: event.device)
                case "failed": tracker.failed()
                default: break
                }
            }
        }
        let runner = Task { try await simulator.run() }
        let payload = [UInt8](repeating: 0x42, count: 1024)
        let clock = ContinuousClock()
        let start = clock.now
        progress("sending \(notifications) notifications (\(mode.rawValue))")
        var sent = 0
        while sent < notifications {
            let batch = min(rate > 0 ? max(1, rate / 200) : 100, notifications - sent)
            let first = sent
            let devices = self.devices
            let user = self.user
            let audience = self.audience
            try await withThrowingTaskGroup(of: Void.self) { group in
                for offset in 0..<batch {
                    let device = (first + offset) % devices
                    let draft = NotificationDraft(message: "load \(first + offset)", richType: .image, contentType: "image/png",
                                                  payload: payload, creator: user, target: audience == .all ? "\(tagPrefix)all" : "\(tagPrefix)\(device)")
                    group.addTask {
                        let record = try await store.create(draft) { _ in "load-payload" }
                        tracker.enqueued(record.id)
                    }
                }
                try await group.waitForAll()
            }
            sent += batch
            if rate > 0 {
                let due = start + .seconds(Double(sent) / Double(rate))
                if clock.now < due { try await Task.sleep(until: due, clock: clock) }
            }
            if sent % 5000 == 0 { tracker.printProgress(elapsed: clock.now - start) }
        }
        let deadline = clock.now + .seconds(timeout)
        let goal: (Tracker) -> Bool = mode == .rich ? { $0.notifiedCount >= $0.expected } : { $0.receivedCount >= $0.expected }
        while !goal(tracker) && clock.now < deadline {
            tracker.printProgress(elapsed: clock.now - start)
            try await Task.sleep(for: .milliseconds(200))
        }
        // Give duplicates, if any, a moment to show up before counting.
        try await Task.sleep(for: .milliseconds(500))
        tracker.printProgress(elapsed: clock.now - start)
        FileHandle.standardError.write(Data("\n".utf8))
        let elapsed = (tracker.lastEvent ?? clock.now) - start
        await simulator.stop()
        _ = try? await runner.value
        await events.value
        await pool.close()
        var report = tracker.report(elapsed: elapsed, mode: mode.rawValue, devices: devices)
        report["audience"] = audience.rawValue
        report["notifications"] = notifications
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .prettyPrinted])
        if let json { try data.write(to: URL(fileURLWithPath: json)) }
        print(String(decoding: data, as: UTF8.self))
    }

    private func progress(_ text: String) {
        FileHandle.standardError.write(Data("loadtest: \(text)\n".utf8))
    }
}

/// Enqueue times and what the devices saw, keyed by notification id.
final class Tracker: Sendable {
    private struct State {
        var enqueued: [Int: ContinuousClock.Instant] = [:]
        var receivedLatencies: [Double] = []
        var notifiedLatencies: [Double] = []
        var seen: Set<Delivery> = []
        var notified: Set<Delivery> = []
        var duplicates = 0
        var failures = 0
        var last: ContinuousClock.Instant?
    }

    private struct Delivery: Hashable {
        let id: Int
        let device: Int
    }

    private let state = Mutex(State())
    /// Pushes expected at the devices (notifications × audience).
    let expected: Int

    init(expected: Int) { self.expected = expected }

    func enqueued(_ id: Int) { state.withLock { $0.enqueued[id] = .now } }

    func received(_ id: Int, device: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            if !state.seen.insert(Delivery(id: id, device: device)).inserted { state.duplicates += 1; return }
            if let at = state.enqueued[id] { state.receivedLatencies.append((now - at).milliseconds) }
            state.last = now
        }
    }

    func notified(_ id: Int, device: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.notified.insert(Delivery(id: id, device: device)).inserted else { return }
            if let at = state.enqueued[id] { state.notifiedLatencies.append((now - at).milliseconds) }
            state.last = now
        }
    }

    func failed() { state.withLock { $0.failures += 1 } }

    var receivedCount: Int { state.withLock { $0.seen.count } }
    var notifiedCount: Int { state.withLock { $0.notified.count } }
    var lastEvent: ContinuousClock.Instant? { state.withLock { $0.last } }

    func printProgress(elapsed: Duration) {
        let (sent, received, notified) = state.withLock { ($0.enqueued.count, $0.seen.count, $0.notified.count) }
        let width = 30
        let filled = expected == 0 ? width : min(width, received * width / expected)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = String(format: "\r[%@] sent %d  delivered %d  notified %d  %.1f s", bar, sent, received, notified, elapsed.seconds)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func report(elapsed: Duration, mode: String, devices: Int) -> [String: Any] {
        state.withLock { state in
            func percentiles(_ values: [Double]) -> [String: Double] {
                let sorted = values.sorted()
                guard !sorted.isEmpty else { return [:] }
                func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))] }
                return ["p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": sorted.last!]
            }
            let seconds = max(elapsed.seconds, 0.001)
            return [
                "mode": mode, "pushes": expected, "devices": devices, "seconds": seconds,
                "deliveredPerSecond": Double(state.seen.count) / seconds,
                "notifiedPerSecond": Double(state.notified.count) / seconds,
                "lost": expected - state.seen.count, "duplicated": state.duplicates, "failed": state.failures,
                "latencyEnqueueToDeviceMs": percentiles(state.receivedLatencies),
                "latencyEnqueueToLocalNotificationMs": percentiles(state.notifiedLatencies),
            ]
        }
    }
}

extension Duration {
    var milliseconds: Double { seconds * 1000 }
}
