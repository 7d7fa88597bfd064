package import Logging
import Metrics
import ServiceLifecycle

/// Publishes the queue's state as gauges, read every `interval` in one pipelined round trip:
/// `richpush_queue_lag_jobs` (not yet read by any worker), `richpush_queue_pending_jobs` (read,
/// not acknowledged), `richpush_queue_delayed_jobs` (waiting for a retry) and
/// `richpush_queue_dead_jobs` (dead letters). Every worker reports the same queue; dashboards
/// take the max. A failed read is logged and tried again at the next interval.
package struct QueueGauges: Service {
    let queue: JobQueue
    let interval: Duration
    let dimensions: [(String, String)]
    let logger: Logger

    /// `labelled`: the gauges carry the queue's partition (`partition="q3"`), for a worker that
    /// reads several.
    package init(queue: JobQueue, interval: Duration = .seconds(5), labelled: Bool = false, logger: Logger) {
        self.queue = queue
        self.interval = interval
        self.dimensions = labelled ? [("partition", queue.configuration.partition)] : []
        self.logger = logger
    }

    package func run() async throws {
        let lag = Gauge(label: "richpush_queue_lag_jobs", dimensions: dimensions)
        let pending = Gauge(label: "richpush_queue_pending_jobs", dimensions: dimensions)
        let delayed = Gauge(label: "richpush_queue_delayed_jobs", dimensions: dimensions)
        let dead = Gauge(label: "richpush_queue_dead_jobs", dimensions: dimensions)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let stats = try await queue.stats()
                    lag.record(stats.lag)
                    pending.record(stats.pending)
                    delayed.record(stats.delayed)
                    dead.record(stats.deadLetters)
                } catch {
                    logger.warning("could not read the queue for its gauges", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
