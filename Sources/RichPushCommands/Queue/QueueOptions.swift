package import ArgumentParser
import Foundation
package import RichPushQueue

/// Options naming the queue in Redis, shared by worker, stats, dlq, replay and enqueue.
package struct QueueOptions: ParsableArguments {
    @Option(name: .customLong("queue-prefix"), help: "Key namespace of the queue in Redis.")
    package var prefix = "richpush"

    @Option(name: .customLong("queue-partition"), help: "Queue partition (the Redis hash tag of its keys).")
    package var partition = "q0"

    @Option(
        name: .customLong("partitions"),
        help: ArgumentHelp(
            "Queue partitions (q0 … q<P-1>, each under its own hash tag, so each lands on a Redis Cluster slot of its own); the same for every process (env RICHPUSH_PARTITIONS; default 1).",
            valueName: "P"))
    package var partitionOption: Int?

    /// `--partitions`, else RICHPUSH_PARTITIONS, else 1.
    package var partitions: Int { partitionOption ?? ProcessInfo.processInfo.environment["RICHPUSH_PARTITIONS"].flatMap { Int($0) } ?? 1 }

    @Option(
        name: .customLong("scheduling"),
        help: ArgumentHelp(
            "Order in which workers take jobs: fair (weighted across apps, an app's single-device sends before its fan-out) or fifo (arrival order); the same for every process (env RICHPUSH_SCHEDULING; default fair).",
            valueName: "fair|fifo"))
    package var schedulingOption: String?

    /// `--scheduling`, else RICHPUSH_SCHEDULING, else fair.
    package var schedulingName: String {
        schedulingOption ?? ProcessInfo.processInfo.environment["RICHPUSH_SCHEDULING"] ?? JobScheduling.fair.rawValue
    }

    @Option(help: "Seconds a delivered job may stay unacknowledged before another worker reclaims it.")
    package var visibilityTimeout: Double = 30

    @Option(help: "Deliveries after which an unacknowledged job is dead-lettered as a poison message.")
    package var maxDeliveries = 5

    @Option(help: "Attempts in all before a failing job is dead-lettered.")
    package var maxAttempts = 5

    @Option(help: "Hours of acknowledged jobs kept in the stream for replay.")
    package var retentionHours: Double = 24

    package init() {}

    package func validate() throws {
        guard visibilityTimeout > 0 else { throw ValidationError("--visibility-timeout must be positive") }
        guard maxDeliveries >= 1 else { throw ValidationError("--max-deliveries must be at least 1") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard retentionHours > 0 else { throw ValidationError("--retention-hours must be positive") }
        guard JobScheduling(rawValue: schedulingName) != nil else {
            throw ValidationError("--scheduling (or RICHPUSH_SCHEDULING) must be fair or fifo, not '\(schedulingName.prefix(40))'")
        }
        guard (1...1024).contains(partitions) else { throw ValidationError("--partitions (or RICHPUSH_PARTITIONS) must be 1 to 1024") }
        guard partitions == 1 || partition == "q0" else {
            throw ValidationError(
                "--queue-partition names the one partition; with --partitions \(partitions) they are q0 … q\(partitions - 1)")
        }
        guard !prefix.isEmpty, !partition.contains("}"), !partition.contains("{") else {
            throw ValidationError("--queue-prefix must not be empty and --queue-partition must not contain braces")
        }
    }

    package var configuration: JobQueueConfiguration {
        JobQueueConfiguration(
            prefix: prefix, partition: partition,
            visibilityTimeout: .milliseconds(Int(visibilityTimeout * 1000)),
            maxDeliveries: maxDeliveries,
            retention: .seconds(retentionHours * 3600),
            retry: RetryPolicy(maxAttempts: maxAttempts),
            scheduling: JobScheduling(rawValue: schedulingName) ?? .fair)
    }
}

extension QueueOptions {
    /// Each partition's queue settings, in partition order.
    package var partitionConfigurations: [JobQueueConfiguration] {
        guard partitions > 1 else { return [configuration] }
        return (0..<partitions).map { index in
            var configuration = self.configuration
            configuration.partition = "q\(index)"
            return configuration
        }
    }
}
