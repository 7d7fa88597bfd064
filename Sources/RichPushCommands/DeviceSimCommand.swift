import ArgumentParser
import Foundation
import Hiredis
import Logging
package import RichPushSimulator
import ServiceLifecycle

/// `richpush device-sim`: simulated devices running the tutorial's app.
struct DeviceSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-sim",
        abstract: "Simulate devices: register, receive silent pushes, fetch, show the local notification, press More.",
        discussion: "Prints one line per event (JSON with --format json). Stops after --count pushes, or on SIGINT/SIGTERM.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, text }

    @OptionGroup var redis: RedisOptions
    @Option(help: "Base URL of the API.") var api = "http://127.0.0.1:8080"
    @Option(help: "User the devices register as.") var user: String
    @Option(help: "Password (or set RICHPUSH_PASSWORD).") var password: String?
    @Option(help: "Number of devices.") var devices = 1
    @Option(help: "active: in-app alert with OK/More; background: banner; mixed: every other device active.") var appState:
        SimulatorConfiguration.AppState = .active
    @Option(help: "What the simulated user does: more (opens the image view), ok, none.") var tap: SimulatorConfiguration.Tap = .more
    @Option(help: "Seconds before the local notification fires (the tutorial's 5).") var fireDelay: Double = 5
    @Option(help: "Directory where the image view saves payloads.") var out: String?
    @Option(help: "Stop after this many pushes were handled (0: run until a signal).") var count = 0
    @Option(help: "Key prefix of the simulated hub (the queue prefix of the workers).") var hubPrefix = "richpush"
    @Option(help: "Device handles are <prefix>-<n> (default sim-<user>).") var handlePrefix: String?
    @Option(help: "Output format.") var format: Format = .text
    @Option(
        help:
            "File where the devices keep the collapse ids of what they show, so a restarted simulator still collapses a resend (a phone's Notification Center survives the app); browsers keep their push subscriptions and installations in <file>.web.json."
    ) var stateFile: String?
    @Option(
        help: ArgumentHelp(
            "apns: iOS devices; fcm: Android devices (FCM data messages); webpush: web devices (a browser's service worker); mixed: every other device Android; all: iOS, Android, web in turn; or a list such as apns,webpush taken in turn.",
            valueName: "platforms"))
    var platform: SimulatorConfiguration.Devices = .apns
    @OptionGroup var webPush: DeviceSimWebPushOptions
    @OptionGroup(title: "The platforms' delivery rules") var rules: DeviceRulesOptions
    @Flag(help: "Register APNs-style device tokens (64 hex digits) instead of <prefix>-<n>, for workers with --adapter apns.")
    var apnsTokens = false
    @Option(help: "Register device n also under the tag g<n mod this> (0: no extra tag), so a sender can address groups of devices.")
    var tagGroups = 0
    @Flag(help: "The app handles each push without showing a notification (a data-sync app): what Safari revokes and FCM deprioritizes.")
    var appShowsNothing = false

    func validate() throws {
        guard devices >= 1 else { throw ValidationError("--devices must be at least 1") }
        guard (0...10_000).contains(tagGroups) else { throw ValidationError("--tag-groups must be between 0 and 10000") }
        guard fireDelay >= 0 else { throw ValidationError("--fire-delay must not be negative") }
        guard URL(string: api)?.host != nil else { throw ValidationError("--api must be a URL such as http://127.0.0.1:8080") }
        if platform.hasWeb, webPush.webpushUrl == nil {
            throw ValidationError("web devices (--platform \(platform.rawValue)) need --webpush-url")
        }
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        guard let secret = password ?? ProcessInfo.processInfo.environment["RICHPUSH_PASSWORD"] else {
            throw CLIError("give --password or set RICHPUSH_PASSWORD")
        }
        var configuration = SimulatorConfiguration(
            apiBaseURL: URL(string: api)!, user: user, password: secret, devices: devices, appState: appState, tap: tap,
            fireDelay: .milliseconds(Int(fireDelay * 1000)), outDirectory: out.map { URL(fileURLWithPath: $0) },
            redis: try redis.configuration(clientName: "richpush-device-sim"), hubPrefix: hubPrefix, handlePrefix: handlePrefix)
        // Each event is written as it happens (one write per line), not through a stream that
        // could buffer without bound, and nothing is left unwritten when the process is killed.
        let json = format == .json
        configuration.eventSink = { event in
            let line = json ? event.jsonLine : event.textLine
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        if redis.isCluster {
            configuration.cluster = RedisClusterClient(configuration: try redis.clusterConfiguration(clientName: "richpush-device-sim"))
        }
        configuration.stateFile = stateFile.map { URL(fileURLWithPath: $0) }
        configuration.apnsTokens = apnsTokens
        configuration.platforms = platform
        configuration.webPush = try webPush.service(needed: platform.hasWeb)
        configuration.rules = try rules.rules(appState: appState)
        configuration.appShowsNotifications = !appShowsNothing
        let simulator: DeviceSimulator
        do {
            simulator = try DeviceSimulator(configuration: configuration)
        } catch let error as SimulatorError {
            throw CLIError("\(error)")
        } catch {
            throw CLIError("cannot use the state file \(stateFile ?? ""): \(error.localizedDescription)")
        }
        do {
            let groups = tagGroups
            try await simulator.start(tags: { index in groups > 0 ? ["g\(index % groups)"] : [] })
        } catch {
            await simulator.stop()
            throw CLIError("device registration failed: \(error)")
        }
        let ruleSummary = configuration.rules.map { "strict rules: \($0.population.description)" } ?? "lenient"
        FileHandle.standardError.write(
            Data("device-sim: \(devices) device(s) of \(user) listening (\(platform.rawValue); \(ruleSummary))\n".utf8))
        var logger = Logger(label: "richpush.device-sim")
        logger.logLevel = .warning
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: DeviceSimulatorService(simulator: simulator, limit: count > 0 ? count : nil))],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await configuration.cluster?.close()
    }
}

extension SimulatorConfiguration.AppState: ExpressibleByArgument {}
extension SimulatorConfiguration.Tap: ExpressibleByArgument {}

extension SimulatorEvent {
    var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{\"event\":\"unencodable\"}"
    }

    var textLine: String {
        var parts = ["device \(device)", event]
        if let richId { parts.append("richId=\(richId)") }
        if let richType { parts.append("type=\(richType)") }
        if let status { parts.append("HTTP \(status)") }
        if let detail { parts.append(detail) }
        if let path { parts.append("saved \(path)") }
        if let micros = sinceSentMicros { parts.append(String(format: "+%.1f ms", Double(micros) / 1000)) }
        return parts.joined(separator: "  ")
    }
}
extension SimulatorConfiguration.Devices: ExpressibleByArgument {
    static var allValueStrings: [String] { ["apns", "fcm", "webpush", "mixed", "all"] }
}
