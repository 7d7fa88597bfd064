import ArgumentParser
import RichPushBench
import RichPushCommands

/// `richpush-bench worker`: `richpush worker` with every option of it, and also the job types
/// `probe` (records each run in a Redis hash: the queue's process tests, smoke tests) and `noop`
/// (scripts/bench-queue.sh).
struct BenchWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "richpush worker, also running the benchmark and test job types probe and noop.")

    @OptionGroup var worker: WorkerCommand
    @Option(help: "Redis list where the noop handler appends its latencies.") var latencyKey: String?

    func run() async throws {
        let latencyKey = latencyKey
        try await worker.run { handlers, redis in
            handlers.register(ProbeJobHandler(redis: redis), for: ProbeJobHandler.type)
            handlers.register(NoopJobHandler(redis: redis, latencyKey: latencyKey), for: NoopJobHandler.type)
        }
    }
}
