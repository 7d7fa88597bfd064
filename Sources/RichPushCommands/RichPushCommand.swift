package import ArgumentParser

/// `richpush`: the commands an operator runs. The executable's `main.swift` runs it; benchmark
/// commands live in `richpush-bench` (RichPushBenchCLI), which production does not ship.
package struct RichPushCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "richpush",
        abstract: "RichPush: rich push notifications (API, workers, device simulator, operator tools) on Redis.",
        subcommands: [
            APICommand.self, UsersCommand.self, KeysCommand.self, AppsCommand.self, WorkerCommand.self, DeviceSimCommand.self,
            APNSSimCommand.self, FCMSimCommand.self, WebPushSimCommand.self, LoadTestCommand.self, ReportCommand.self, EnqueueCommand.self,
            StatsCommand.self, DeadLetterCommand.self, ReplayCommand.self,
            MigrateCommand.self, PingCommand.self,
        ]
    )

    package init() {}
}
