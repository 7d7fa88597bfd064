import ArgumentParser
import RichPushApps
import RichPushCore
import RichPushQueue

/// `richpush apps pause|resume NAME`: holds an app's sending under fair scheduling (its jobs wait
/// in its lanes, nothing lost or dead-lettered) and lets it flow again (docs/queue.md#pausing-an-app).
extension AppsCommand {
    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause an app's sending: its jobs wait in its lanes and no worker takes them; other apps go on.",
            discussion:
                "Written into every queue partition: give the deployment's --partitions. Jobs already taken finish. Fair scheduling only.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "The app's id (`default` for the deployment's first app).") var id: String

        func run() async throws {
            let changed = try await AppsCommand.setPaused(true, id: id, redis: redis, queue: queue)
            Swift.print(changed ? "paused \(id)" : "\(id) was already paused")
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a paused app's sending: its waiting jobs flow again.",
            discussion: "Give the deployment's --partitions, as for pause.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "The app's id.") var id: String

        func run() async throws {
            let changed = try await AppsCommand.setPaused(false, id: id, redis: redis, queue: queue)
            Swift.print(changed ? "resumed \(id)" : "\(id) was not paused")
        }
    }

    /// The queue apps an app's pause holds: the default app's jobs and those that name no app
    /// (those of `richpush enqueue`), as the console counts them.
    static func pausedApps(_ app: AppID) -> [String] {
        app.isDefault ? [app.rawValue, JobRequest.sharedApp] : [app.rawValue]
    }

    /// Pauses or resumes a known app: on its record first (what a starting worker writes into the
    /// partitions again), then in every partition; whether a partition changed. A failure between
    /// the two is an error: the same command finishes the job.
    static func setPaused(_ paused: Bool, id: String, redis: RedisOptions, queue: QueueOptions) async throws -> Bool {
        guard queue.schedulingName == JobScheduling.fair.rawValue else {
            throw CLIError("pausing needs fair scheduling (--scheduling fair): under fifo, jobs go straight into the stream")
        }
        let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
        return try await AppsOutput.withStore(redis, queue, nil) { store in
            guard try await store.summary(id: appID) != nil else { throw AppError.notFound(appID) }
            _ = try await store.update(id: appID, change: AppChange(paused: paused))
            let queues = queue.partitionConfigurations.map { JobQueue(redis: store.redis, configuration: $0) }
            return try await JobQueue.setPaused(paused, apps: pausedApps(appID), in: queues) > 0
        }
    }
}
