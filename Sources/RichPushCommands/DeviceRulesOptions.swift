import ArgumentParser
import Foundation
import RichPushSimulator

/// `richpush device-sim` options for the platforms' delivery rules (docs/devices.md): strict by
/// default, `--lenient` for throughput benchmarks.
struct DeviceRulesOptions: ParsableArguments {
    @Flag(help: "Every push wakes its app at once, as before the platforms' rules (for throughput benchmarks).")
    var lenient = false
    @Option(
        help: ArgumentHelp(
            "Share of devices per condition, as condition=weight pairs (foreground, background, suspended, force-quit, offline, doze, low-power), e.g. foreground=20,background=60,force-quit=20; default: from --app-state.",
            valueName: "pairs"))
    var population: String?
    @Option(help: "A file holding the population as a JSON object of condition: weight (instead of --population).")
    var populationFile: String?
    @Option(help: "Fixes which device is in which condition, and the Doze windows' phases.") var seed: UInt64 = 1
    @Option(
        help:
            "Simulated seconds per real second: budgets, Doze windows and offline times run this much faster (the 30 s limits on the app's work stay real)."
    )
    var timeScale: Double = 1
    @Option(help: "iOS background pushes an app in the background may take per hour (Apple: two or three).")
    var backgroundBudget: Double = 3
    @Option(help: "Android: simulated seconds between Doze maintenance windows.") var dozeWindow: Double = 1800
    @Option(help: "Simulated seconds an offline device stays off the network before it comes back.") var offlineFor: Double = 600
    @Option(help: "Web: the share of web devices that are Safari (revokes a subscription whose pushes show nothing), the others Chrome.")
    var safariShare: Double = 0.5
    @Option(help: "iOS: real seconds the notification service extension has to attach the media (Apple: about 30).")
    var extensionSeconds: Double = 30

    /// The rules, or nil with `--lenient`; the population from `--population`, its file, or the
    /// app state.
    func rules(appState: SimulatorConfiguration.AppState) throws -> DeviceRules? {
        guard !lenient else {
            guard population == nil, populationFile == nil else {
                throw CLIError("--lenient devices have no population: drop --population")
            }
            return nil
        }
        var rules = DeviceRules()
        rules.seed = seed
        rules.timeScale = timeScale
        rules.backgroundPushesPerHour = backgroundBudget
        rules.dozeWindowSeconds = dozeWindow
        rules.offlineSeconds = offlineFor
        rules.extensionSeconds = extensionSeconds
        rules.safariShare = safariShare
        switch (population, populationFile) {
        case (.some, .some):
            throw CLIError("give --population or --population-file, not both")
        case (let text?, nil):
            rules.population = try Self.population(text, from: "--population")
        case (nil, let path?):
            let url = URL(fileURLWithPath: path)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
            guard let size else { throw CLIError("cannot read the population file \(path)") }
            guard size <= 4096 else { throw CLIError("the population file \(path) is \(size) bytes; at most 4096") }
            guard let data = try? Data(contentsOf: url) else { throw CLIError("cannot read the population file \(path)") }
            rules.population = try Self.population(String(decoding: data, as: UTF8.self), from: path)
        case (nil, nil):
            rules.population =
                switch appState {
                case .active: .all(.foreground)
                case .background: .all(.background)
                case .mixed: .alternating
                }
        }
        if let problem = rules.problem { throw CLIError(problem) }
        return rules
    }

    private static func population(_ text: String, from source: String) throws -> DevicePopulation {
        do {
            return try DevicePopulation(parsing: text)
        } catch {
            throw CLIError("\(source): \(error)")
        }
    }
}
