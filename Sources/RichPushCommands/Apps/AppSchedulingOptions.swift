import ArgumentParser
import Hiredis
import RichPushApps
import RichPushQueue

/// `--weight`, `--max-in-flight`: an app's share of the workers under fair scheduling (not given:
/// unchanged). See docs/queue.md#fair-scheduling.
struct AppSchedulingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The app's share of the workers relative to other apps with work (\(AppShare.weights.lowerBound) to \(AppShare.weights.upperBound); default 1).",
            valueName: "N"))
    var weight: Int?
    @Option(
        help: ArgumentHelp(
            "Most of the app's jobs in flight at once in each queue partition (\(AppShare.caps.lowerBound) to \(AppShare.caps.upperBound)); `none` removes the cap.",
            valueName: "N|none"))
    var maxInFlight: String?

    func validate() throws {
        if let weight, !AppShare.weights.contains(weight) { throw ValidationError("--weight: \(AppShare.weightProblem)") }
        if let maxInFlight, maxInFlight != "none", Int(maxInFlight).map(AppShare.caps.contains) != true {
            throw ValidationError(
                "--max-in-flight: '\(maxInFlight.prefix(20))' is not a number from \(AppShare.caps.lowerBound) to \(AppShare.caps.upperBound), nor `none`"
            )
        }
    }

    /// Whether a weight or cap is given.
    var isGiven: Bool { weight != nil || maxInFlight != nil }

    /// `current` with the weight and cap given.
    func scheduling(over current: AppShare) -> AppShare {
        let cap: Int?? = maxInFlight.map { $0 == "none" ? nil : Int($0) }
        return AppShare(weight: weight ?? current.weight, maxInFlight: cap ?? current.maxInFlight)
    }

    /// Writes the app's stored weight and cap into every partition of the queue; a failure says
    /// the change is stored and that `again` applies it.
    static func apply(_ app: AppSummary, redis: any RedisClient, queue: QueueOptions, again: String) async throws {
        let queues = queue.partitionConfigurations.map { JobQueue(redis: redis, configuration: $0) }
        do {
            try await JobQueue.setLimits(app.scheduling, of: app.id.rawValue, in: queues)
        } catch {
            throw CLIError(
                "app '\(app.id)' is stored with weight \(app.scheduling.weight) and max in flight \(app.scheduling.maxInFlight.map(String.init) ?? "none"), "
                    + "but the queue's \(queues.count) partition(s) could not be told (\(error)); run \(again) again")
        }
    }
}
