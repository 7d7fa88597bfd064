import ArgumentParser
import RichPushQueue

/// Options naming the queue in Redis, shared by worker, stats, dlq, replay and enqueue.
struct QueueOptions: ParsableArguments {
    @Option(name: .customLong("queue-prefix"), help: "Key namespace of the queue in Redis.")
    var prefix = "richpush"

    @Option(name: .customLong("queue-partition"), help: "Queue partition (the Redis hash tag of its keys).")
    var partition = "q0"

    @Option(help: "Seconds a delivered job may stay unacknowledged before another worker reclaims it.")
    var visibilityTimeout: Double = 30

    @Option(help: "Deliveries after which an unacknowledged job is dead-lettered as a poison message.")
    var maxDeliveries = 5

    @Option(help: "Attempts in all before a failing job is dead-lettered.")
    var maxAttempts = 5

    @Option(help: "Hours of acknowledged jobs kept in the stream for replay.")
    var retentionHours: Double = 24

    func validate() throws {
        guard visibilityTimeout > 0 else { throw ValidationError("--visibility-timeout must be positive") }
        guard maxDeliveries >= 1 else { throw ValidationError("--max-deliveries must be at least 1") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard retentionHours > 0 else { throw ValidationError("--retention-hours must be positive") }
        guard !prefix.isEmpty, !partition.contains("}"), !partition.contains("{") else {
            throw ValidationError("--queue-prefix must not be empty and --queue-partition must not contain braces")
        }
    }

    var configuration: JobQueueConfiguration {
        JobQueueConfiguration(
            prefix: prefix, partition: partition,
            visibilityTimeout: .milliseconds(Int(visibilityTimeout * 1000)),
            maxDeliveries: maxDeliveries,
            retention: .seconds(retentionHours * 3600),
            retry: RetryPolicy(maxAttempts: maxAttempts))
    }
}
