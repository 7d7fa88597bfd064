package import Logging
import Metrics
import ServiceLifecycle

/// Publishes each app's share of the queue as gauges, read every `interval` in one pipelined
/// round trip over all partitions (``JobQueue/appStats(in:)``), summed over them:
/// `richpush_app_waiting_jobs{app}` (both lanes), `richpush_app_oldest_waiting_seconds{app}` (the
/// oldest job at the head of its lanes, from its enqueue time) and `richpush_app_in_flight_jobs{app}`.
///
/// Bounded series: an app is labelled by ``AppLabels`` (the first 100 the process names; the
/// rest summed as `other`, their oldest age the largest), and an app once named is reported
/// (as 0 when idle) for the process's life, so its gauge never sticks at a stale value. Every
/// worker reports the same numbers; dashboards take the max. A failed read is logged and tried
/// again at the next interval.
package struct AppQueueGauges: Service {
    let queues: [JobQueue]
    let interval: Duration
    let labels: AppLabels
    let logger: Logger

    package init(queues: [JobQueue], interval: Duration = .seconds(5), labels: AppLabels, logger: Logger) {
        self.queues = queues
        self.interval = interval
        self.labels = labels
        self.logger = logger
    }

    /// One app label's three gauges.
    private struct Series {
        let waiting: Gauge, oldest: Gauge, inFlight: Gauge

        init(_ label: String) {
            waiting = Gauge(label: "richpush_app_waiting_jobs", dimensions: [("app", label)])
            oldest = Gauge(label: "richpush_app_oldest_waiting_seconds", dimensions: [("app", label)])
            inFlight = Gauge(label: "richpush_app_in_flight_jobs", dimensions: [("app", label)])
        }
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            var series: [String: Series] = [:]
            while !Task.isCancelled {
                do {
                    let byLabel = Self.byLabel(AppQueueStats.total(try await JobQueue.appStats(in: queues)), labels: labels)
                    for label in labels.names.union(byLabel.keys) {
                        let stats = byLabel[label] ?? AppQueueStats()
                        let gauges = series[label] ?? Series(label)
                        series[label] = gauges
                        gauges.waiting.record(stats.waiting)
                        gauges.oldest.record(Double(stats.oldestWaitingAgeMilliseconds) / 1000)
                        gauges.inFlight.record(stats.inFlight)
                    }
                } catch {
                    logger.warning("could not read the apps' queue numbers for their gauges", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// The apps' numbers under their labels (those past the limit added up as `other`).
    static func byLabel(_ apps: [String: AppQueueStats], labels: AppLabels) -> [String: AppQueueStats] {
        var result: [String: AppQueueStats] = [:]
        // By name, so which apps get the free labels does not depend on the dictionary's order.
        for (app, stats) in apps.sorted(by: { $0.key < $1.key }) {
            let label = labels.label(app)
            result[label] = result[label].map { $0.adding(stats) } ?? stats
        }
        return result
    }
}
