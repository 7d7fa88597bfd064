import ArgumentParser
import Foundation
import Hiredis
import RichPushBench
import RichPushCommands
import RichPushQueue

/// `richpush bench queue`: the producer and referee of scripts/bench-queue.sh. It enqueues N noop
/// jobs (pipelined), waits until workers have processed them all, then reads the latencies the
/// workers recorded and prints the figures as JSON.
struct BenchQueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "Enqueue N noop jobs, wait for the workers, print rates and latencies.")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Jobs to enqueue.") var jobs = 200_000
    @Option(help: "Jobs per pipelined enqueue batch.") var batch = 1000
    @Option(help: "Enqueue at most this many jobs per second (0: as fast as possible).") var rate = 0
    @Option(help: "Concurrent producers.") var producers = 4
    @Option(help: "Redis list the workers' noop handler appends latencies to.") var latencyKey = "bench:latency"
    @Option(help: "Seconds to wait for the workers before giving up.") var timeout: Double = 300

    func run() async throws {
        let connection = RedisConnectionPool(configuration: try redis.configuration(clientName: "richpush-bench"), size: 2)
        let jobQueue = JobQueue(redis: connection, configuration: queue.configuration)
        try await jobQueue.ensureGroup()
        let processedBefore = try await jobQueue.stats().processed
        let clock = ContinuousClock()
        let start = clock.now
        // Several producers at once, as API replicas would be; each sends pipelined batches.
        let perProducer = (jobs + producers - 1) / producers
        // At a set rate, send small batches every ~2 ms rather than bursts, as steady traffic would.
        let batch = rate > 0 ? max(1, rate / producers / 500) : self.batch
        try await withThrowingTaskGroup(of: Void.self) { group in
            for producer in 0..<producers {
                let share = min(perProducer, jobs - producer * perProducer)
                group.addTask {
                    var sent = 0
                    while sent < share {
                        let count = min(batch, share - sent)
                        let now = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
                        let request = JobRequest(type: NoopJobHandler.type, payload: Array(String(now).utf8))
                        try await jobQueue.enqueue(Array(repeating: request, count: count))
                        sent += count
                        if rate > 0 {
                            let due = start + .seconds(Double(sent) / (Double(rate) / Double(producers)))
                            if clock.now < due { try await Task.sleep(until: due, clock: clock) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let enqueued = clock.now - start
        var processed = 0
        let deadline = clock.now + .seconds(timeout)
        while processed < jobs {
            processed = try await jobQueue.stats().processed - processedBefore
            if clock.now > deadline { throw CLIError("only \(processed) of \(jobs) jobs processed after \(timeout) s") }
            if processed < jobs { try await Task.sleep(for: .milliseconds(5)) }
        }
        let total = clock.now - start
        let result: [String: Double] = [
            "jobs": Double(jobs),
            "enqueueSeconds": enqueued.seconds,
            "enqueuePerSecond": Double(jobs) / enqueued.seconds,
            "endToEndSeconds": total.seconds,
            "endToEndPerSecond": Double(jobs) / total.seconds,
        ]
        await connection.close()
        let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
}
