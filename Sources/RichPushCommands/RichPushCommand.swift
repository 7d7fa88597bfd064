import ArgumentParser

@main
struct RichPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "richpush",
        abstract: "RichPush: rich push notifications (API, workers, device simulator, operator tools) on Redis.",
        subcommands: [
            APICommand.self, UsersCommand.self, KeysCommand.self, AppsCommand.self, WorkerCommand.self, DeviceSimCommand.self,
            APNSSimCommand.self, FCMSimCommand.self, WebPushSimCommand.self, LoadTestCommand.self, ReportCommand.self, EnqueueCommand.self,
            StatsCommand.self, DeadLetterCommand.self, ReplayCommand.self,
            MigrateCommand.self, PingCommand.self, BenchCommand.self,
        ]
    )
}
