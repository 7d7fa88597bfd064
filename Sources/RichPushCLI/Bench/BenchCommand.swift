import ArgumentParser

/// `richpush bench …`: measurements used by scripts/bench*.sh; not part of normal operation.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks (used by scripts/bench-*.sh).",
        subcommands: [
            BenchRedisCommand.self, BenchQueueCommand.self, BenchAPNSCommand.self, BenchFCMCommand.self, BenchWebPushCommand.self,
            BenchWebhooksCommand.self, BenchFairnessCommand.self, BenchConsoleSeedCommand.self, BenchDeviceClaimsCommand.self,
        ]
    )
}
