import RichPushReport

extension LoadReport {
    /// A small silent-mode run with round numbers: five 1-second samples delivering 100 to
    /// 500 pushes/s, two workers splitting 600/400, a histogram of known counts.
    static func fixture(
        mode: String = "silent", lost: Int = 0, duplicated: Int = 0, consumers: [String] = ["worker-1", "worker-2"]
    ) -> LoadReport {
        let timeline = (1...5).map { second -> Sample in
            let s = Double(second)
            return Sample(
                t: s, sent: second * 300, delivered: second * (second + 1) * 50, notified: 0,
                sentPerSecond: 300, deliveredPerSecond: s * 100,
                latencyMs: Percentiles(p50: s, p90: s * 2, p99: s * 3, max: 40, count: second * 100),
                queueLag: 1000 - second * 200, queuePending: 10 * second,
                processes: ["api": ProcessSample(rssMiB: 40 + s, cpuPercent: 20), "worker-1": ProcessSample(rssMiB: 60.5, cpuPercent: 90)])
        }
        return LoadReport(
            settings: Settings(
                mode: mode, audience: "one", shape: "max", notifications: 1500, devices: 1000, workers: 2, rate: 0,
                startedAt: "2025-06-01T12:00:00Z", command: "richpush loadtest --notifications 1500 --report </tmp/r>"),
            summary: Summary(
                seconds: 5, pushesExpected: 1500, delivered: 1500 - lost, notified: mode == "rich" ? 1400 : 0,
                deliveredPerSecond: 22417.4, notifiedPerSecond: mode == "rich" ? 1217 : 0,
                lost: lost, duplicated: duplicated, failed: 0,
                enqueueToDeviceMs: Percentiles(p50: 2.94, p90: 5.1, p99: 7.25, max: 22.2, count: 1500),
                enqueueToNotificationMs: mode == "rich" ? Percentiles(p50: 30, p90: 41, p99: 55.55, max: 90, count: 1400) : nil),
            timeline: timeline,
            histogram: [
                HistogramBucket(upperMs: 0.25, count: 0), HistogramBucket(upperMs: 0.5, count: 3), HistogramBucket(upperMs: 1, count: 120),
                HistogramBucket(upperMs: 2, count: 700), HistogramBucket(upperMs: 4, count: 600), HistogramBucket(upperMs: nil, count: 77),
            ],
            workers: [WorkerShare(consumer: consumers[0], jobs: 600), WorkerShare(consumer: consumers[1], jobs: 400)],
            processes: [
                ProcessSummary(name: "api", pid: 101, peakRSSMiB: 45, cpuSeconds: 1),
                ProcessSummary(name: "worker-1", pid: 102, peakRSSMiB: 60.5, cpuSeconds: 4.5),
            ])
    }

    /// A run that measured nothing: no samples, no latencies, no workers, no processes.
    static let empty = LoadReport(
        settings: Settings(
            mode: "rich", audience: "all", shape: "burst", notifications: 0, devices: 0, workers: 0, rate: 10, startedAt: "", command: ""),
        summary: Summary(
            seconds: 0, pushesExpected: 0, delivered: 0, notified: 0, deliveredPerSecond: 0, notifiedPerSecond: 0,
            lost: 0, duplicated: 0, failed: 0, enqueueToDeviceMs: nil, enqueueToNotificationMs: nil),
        timeline: [], histogram: [], workers: [], processes: [])
}
