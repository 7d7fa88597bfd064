import ArgumentParser

/// `richpush-bench`: the measurements of scripts/bench-*.sh, and `worker` and `api` as `richpush`
/// runs them plus what only benchmarks and the queue's tests need (the `probe` and `noop` job
/// types, `GET /bench/hello`). Not part of a deployment: `richpush` does not link any of it.
@main
struct RichPushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "richpush-bench",
        abstract: "Benchmarks of RichPush (used by scripts/bench-*.sh); never needed in production.",
        subcommands: [
            BenchRedisCommand.self, BenchQueueCommand.self, BenchAPNSCommand.self, BenchFCMCommand.self, BenchWebPushCommand.self,
            BenchWebhooksCommand.self, BenchFairnessCommand.self, BenchConsoleSeedCommand.self, BenchDeviceClaimsCommand.self,
            BenchWorkerCommand.self, BenchAPICommand.self,
        ]
    )
}
