import Foundation
import RichPushQueue
import RichPushReport
import Synchronization

/// Takes one ``Sample`` per interval while a load test runs: counts and rates from the tracker,
/// the interval's latency percentiles, the queue's lag and pending, and each watched process's
/// memory and CPU. A failed queue read leaves that interval's queue figures at the last values.
final class LoadSampler: Sendable {
    private let tracker: LoadTracker
    private let queues: [JobQueue]
    private let probes: [ProcessProbe]
    private let interval: Duration
    private let samples = Mutex<[Sample]>([])
    private let peaks = Mutex<[String: ProcessProbe.Reading]>([:])
    private let cpuAtStart: [String: Double]

    /// `queues`: every partition of the queue; the timeline shows their total.
    init(tracker: LoadTracker, queues: [JobQueue], probes: [ProcessProbe], interval: Duration) {
        self.tracker = tracker
        self.queues = queues
        self.probes = probes
        self.interval = interval
        cpuAtStart = Dictionary(
            probes.compactMap { probe in probe.read().map { (probe.name, $0.cpuSeconds) } }, uniquingKeysWith: { first, _ in first })
    }

    /// Samples until cancelled.
    func run(start: ContinuousClock.Instant) async {
        var previous = (at: start, counts: tracker.counts, cpu: cpuAtStart)
        var queueFigures = (lag: 0, pending: 0)
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = ContinuousClock.now
            let counts = tracker.counts
            if let stats = try? await QueueStats.read(queues) { queueFigures = (stats.lag, stats.pending) }
            let seconds = max((now - previous.at).seconds, 0.001)
            var processes: [String: ProcessSample] = [:]
            var cpu = previous.cpu
            for probe in probes {
                guard let reading = probe.read() else { continue }
                let used = reading.cpuSeconds - (previous.cpu[probe.name] ?? reading.cpuSeconds)
                processes[probe.name] = ProcessSample(rssMiB: reading.rssMiB, cpuPercent: 100 * used / seconds)
                cpu[probe.name] = reading.cpuSeconds
                peaks.withLock { $0[probe.name] = reading }
            }
            let sample = Sample(
                t: (now - start).seconds, sent: counts.sent, delivered: counts.delivered, notified: counts.notified,
                sentPerSecond: Double(counts.sent - previous.counts.sent) / seconds,
                deliveredPerSecond: Double(counts.delivered - previous.counts.delivered) / seconds,
                latencyMs: tracker.takeIntervalPercentiles(),
                queueLag: queueFigures.lag, queuePending: queueFigures.pending, processes: processes)
            samples.withLock { $0.append(sample) }
            previous = (now, counts, cpu)
        }
    }

    var timeline: [Sample] { samples.withLock { $0 } }

    /// Peak RSS and CPU seconds used since the sampler started, per watched process.
    func processSummaries() -> [ProcessSummary] {
        probes.compactMap { probe in
            let reading = probe.read() ?? peaks.withLock { $0[probe.name] }
            guard let reading else { return nil }
            return ProcessSummary(
                name: probe.name, pid: probe.pid, peakRSSMiB: reading.peakRSSMiB,
                cpuSeconds: reading.cpuSeconds - (cpuAtStart[probe.name] ?? 0))
        }
    }
}
