import ArgumentParser

@main
struct RichPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "richpush",
        abstract: "RichPush: rich push notifications (API, workers, device simulator, operator tools) on Redis.",
        subcommands: [PingCommand.self, BenchCommand.self]
    )
}
