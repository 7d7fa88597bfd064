import ArgumentParser
import Foundation
import Hiredis
import RichPushQueue

/// `richpush stats`: the queue's state.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the queue's state: length, lag, pending, delayed, dead letters, consumers, totals, and the busiest apps.")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Flag(help: "Print JSON instead of text.") var json = false
    @Flag(help: "Refresh every --interval seconds with rates (a live view; Ctrl-C to stop).") var watch = false
    @Option(help: "Seconds between refreshes with --watch.") var interval: Double = 1
    @Option(help: "Stop --watch after this many refreshes (0: until interrupted).") var refreshes = 0

    func validate() throws {
        guard interval >= 0.1 else { throw ValidationError("--interval must be at least 0.1 seconds") }
        guard !(watch && json) else { throw ValidationError("--watch and --json do not go together") }
    }

    func run() async throws {
        let connection = try await connect(redis, clientName: "richpush-stats")
        let queues = queue.partitionConfigurations.map { JobQueue(redis: connection, configuration: $0) }
        if watch {
            try await watchLoop(queues)
            await connection.close()
            return
        }
        let (stats, partitions) = try await QueueStats.snapshot(queues, perApp: true)
        await connection.close()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            // One partition: its stats as ever; several: the total and each partition's.
            let data =
                queues.count == 1
                ? try encoder.encode(stats)
                : try encoder.encode(
                    PartitionedStats(
                        total: stats, partitions: Dictionary(uniqueKeysWithValues: zip(queues.map(\.configuration.partition), partitions))))
            print(String(decoding: data, as: UTF8.self))
            return
        }
        if queues.count > 1 { print("all \(queues.count) partitions") }
        print(
            """
            waiting (in lanes) \(stats.waiting)
            stream length      \(stats.length)
            lag (undelivered)  \(stats.lag)
            pending            \(stats.pending) (oldest \(stats.oldestPendingAgeMilliseconds) ms)
            delayed retries    \(stats.delayed)
            dead letters       \(stats.deadLetters)
            processed          \(stats.processed)
            retried            \(stats.retried)
            failed (dropped)   \(stats.failed)
            dead-lettered      \(stats.deadLettered)
            consumers          \(stats.consumers.count)
            """)
        for consumer in stats.consumers {
            print(
                "  \(consumer.name)  processed \(stats.processedByConsumer[consumer.name] ?? 0)  pending \(consumer.pending)  idle \(consumer.idleMilliseconds) ms"
            )
        }
        let departed = stats.processedByConsumer.keys.filter { name in !stats.consumers.contains { $0.name == name } }.sorted()
        if !departed.isEmpty {
            print("departed consumers (processed)")
            for name in departed { print("  \(name)  processed \(stats.processedByConsumer[name] ?? 0)") }
        }
        print(Self.appTable(stats.apps), terminator: "")
        guard queues.count > 1 else { return }
        print("per partition")
        for (jobQueue, part) in zip(queues, partitions) {
            print(
                "  \(jobQueue.configuration.partition)  lag \(part.lag)  pending \(part.pending)  delayed \(part.delayed)  dead letters \(part.deadLetters)  processed \(part.processed)  retried \(part.retried)  dead-lettered \(part.deadLettered)"
            )
        }
    }
}

/// `richpush stats --json` past one partition.
struct PartitionedStats: Encodable {
    let total: QueueStats
    let partitions: [String: QueueStats]
}

extension StatsCommand {
    /// Redraws the queue's state with per-second rates computed from the totals.
    private func watchLoop(_ queues: [JobQueue]) async throws {
        var previous: (stats: QueueStats, at: ContinuousClock.Instant)?
        var shown = 0
        while refreshes == 0 || shown < refreshes {
            let stats = try await QueueStats.read(queues, perApp: true)
            let now = ContinuousClock.now
            var rates = "rates: (first sample)"
            var appRates: [String: Double]?
            if let previous {
                let seconds = max((now - previous.at).seconds, 0.001)
                appRates = Self.doneRates(stats.apps, since: previous.stats.apps, seconds: seconds)
                func rate(_ path: KeyPath<QueueStats, Int>) -> String {
                    String(format: "%.0f/s", Double(stats[keyPath: path] - previous.stats[keyPath: path]) / seconds)
                }
                rates =
                    "rates: processed \(rate(\.processed))  retried \(rate(\.retried))  dead-lettered \(rate(\.deadLettered))  enqueued \(rate(\.length))"
            }
            var screen = "\u{1B}[H\u{1B}[2J"  // home + clear, as `watch` does
            screen +=
                "richpush queue \(queues.count == 1 ? queue.configuration.streamKey : "\(queue.prefix), \(queues.count) partitions")  (every \(interval) s, Ctrl-C to stop)\n\n"
            screen += "\(rates)\n"
            screen +=
                "waiting \(stats.waiting)  lag \(stats.lag)  pending \(stats.pending) (oldest \(stats.oldestPendingAgeMilliseconds) ms)  delayed \(stats.delayed)  dead letters \(stats.deadLetters)\n"
            screen +=
                "totals: processed \(stats.processed)  retried \(stats.retried)  failed \(stats.failed)  dead-lettered \(stats.deadLettered)\n\n"
            screen += "consumers (\(stats.consumers.count)):\n"
            for consumer in stats.consumers {
                screen +=
                    "  \(consumer.name)  processed \(stats.processedByConsumer[consumer.name] ?? 0)  pending \(consumer.pending)  idle \(consumer.idleMilliseconds) ms\n"
            }
            screen += "\n" + Self.appTable(stats.apps, rates: appRates ?? [:])
            FileHandle.standardOutput.write(Data(screen.utf8))
            previous = (stats, now)
            shown += 1
            if refreshes == 0 || shown < refreshes { try await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
        }
    }
}
