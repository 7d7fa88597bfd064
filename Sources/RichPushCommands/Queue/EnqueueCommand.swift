import ArgumentParser
import Foundation
import RichPushQueue

/// `richpush enqueue`: put jobs on the queue by hand (smoke tests, operations).
struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Enqueue jobs by hand, pipelined in batches of 1000.",
        discussion: "Example: richpush enqueue --type probe --payload '{\"key\":\"smoke\",\"field\":\"1\"}'")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Job type (the handler that runs it: probe, noop, ...).") var type: String
    @Option(help: "Payload text (sent as its UTF-8 bytes).") var payload = ""
    @Option(help: "How many copies to enqueue.") var count = 1
    @Option(help: "Idempotency key: a second enqueue with it adds nothing (only with --count 1).") var idempotencyKey: String?

    func validate() throws {
        guard !type.isEmpty else { throw ValidationError("--type must not be empty") }
        guard count >= 1 else { throw ValidationError("--count must be at least 1") }
        guard idempotencyKey == nil || count == 1 else { throw ValidationError("--idempotency-key needs --count 1") }
    }

    func run() async throws {
        let connection = try await connect(redis, clientName: "richpush-enqueue")
        let jobQueue = JobQueue(redis: connection, configuration: queue.configuration)
        try await jobQueue.ensureGroup()
        var ids: [String] = []
        let request = JobRequest(type: type, payload: Array(payload.utf8), idempotencyKey: idempotencyKey)
        var left = count
        while left > 0 {
            let batch = min(left, 1000)
            ids += try await jobQueue.enqueue(Array(repeating: request, count: batch))
            left -= batch
        }
        await connection.close()
        if count == 1 { print(ids[0]) } else { print("enqueued \(ids.count) jobs, \(ids.first!) … \(ids.last!)") }
    }
}
