/// The report's charts, built once here so the HTML page and the overview picture draw the same
/// data the same way; only the sizes differ.
extension LoadReport {
    /// (a) Notifications created and pushes delivered per second, per interval.
    func throughputChart(width: Double, height: Double) -> LineChart {
        LineChart(
            chart: SVGChart(id: "throughput", title: "Throughput", width: width, height: height),
            yLabel: "per second",
            series: [
                .init(name: "sent/s", points: timeline.map { ($0.t, $0.sentPerSecond) }),
                .init(name: "delivered/s", points: timeline.map { ($0.t, $0.deliveredPerSecond) }),
            ],
            interval: samplingInterval)
    }

    /// (b) Enqueue → device latency percentiles of each interval; intervals without deliveries
    /// are left out (and break the lines).
    func latencyChart(width: Double, height: Double) -> LineChart {
        let measured = timeline.compactMap { sample in sample.latencyMs.flatMap { $0.count > 0 ? (sample.t, $0) : nil } }
        return LineChart(
            chart: SVGChart(id: "latency", title: "Enqueue → device latency", width: width, height: height),
            yLabel: "ms",
            series: [
                .init(name: "p50", points: measured.map { ($0.0, $0.1.p50) }),
                .init(name: "p90", points: measured.map { ($0.0, $0.1.p90) }),
                .init(name: "p99", points: measured.map { ($0.0, $0.1.p99) }),
            ],
            interval: samplingInterval,
            emptyText: "no deliveries")
    }

    /// (c) The whole run's enqueue → device latency distribution.
    func histogramChart(width: Double, height: Double) -> BarChart {
        let labels = HistogramBucket.labels(histogram)
        return BarChart(
            chart: SVGChart(id: "histogram", title: "Latency distribution", width: width, height: height),
            seriesName: "pushes",
            xLabel: "enqueue → device latency",
            yLabel: "pushes",
            bars: zip(histogram, labels).map { BarChart.Bar(label: $1.label, detail: $1.detail, count: $0.count) },
            emptyText: "no deliveries")
    }

    /// (g) The CPU budget: each process's CPU time per notification (the load generator too,
    /// labelled as such); a bar's share is of the whole.
    func cpuChart(width: Double, height: Double) -> BarChart {
        BarChart(
            chart: SVGChart(id: "cpu", title: "CPU per notification", width: width, height: height),
            seriesName: "CPU µs per notification",
            xLabel: "process",
            yLabel: "µs per notification",
            bars: cpuBudget.map { share in
                let label = share.name == Self.loadGeneratorName ? "\(share.name) (load generator)" : share.name
                return BarChart.Bar(
                    label: label, detail: "\(label), µs per notification", count: Int(share.microsPerNotification.rounded()))
            },
            emptyText: "no process sampled")
    }

    /// (d) Jobs waiting for a worker (lag) and jobs being worked on (pending).
    func queueChart(width: Double, height: Double) -> LineChart {
        LineChart(
            chart: SVGChart(id: "queue", title: "Queue", width: width, height: height),
            yLabel: "jobs",
            series: [
                .init(name: "lag", points: timeline.map { ($0.t, Double($0.queueLag)) }),
                .init(name: "pending", points: timeline.map { ($0.t, Double($0.queuePending)) }),
            ],
            interval: samplingInterval)
    }

    /// (e) Jobs handled per worker consumer.
    func workerChart(width: Double) -> ShareChart {
        ShareChart(
            id: "workers", title: "Jobs per worker", width: width, seriesName: "jobs",
            rows: workers.map { ShareChart.Row(label: $0.consumer, count: $0.jobs) }, emptyText: "no jobs recorded")
    }

    /// (f) Resident memory of each process over time.
    func memoryChart(width: Double, height: Double) -> LineChart {
        LineChart(
            chart: SVGChart(id: "memory", title: "Memory (RSS) per process", width: width, height: height),
            yLabel: "MiB",
            series: processNames.map { name in
                LineChart.Series(name: name, points: timeline.compactMap { sample in sample.processes[name].map { (sample.t, $0.rssMiB) } })
            },
            interval: samplingInterval)
    }

    /// The median step between samples (normally 1 s); nil with fewer than two samples.
    var samplingInterval: Double? {
        let steps = zip(timeline, timeline.dropFirst()).map { $1.t - $0.t }.sorted()
        return steps.isEmpty ? nil : steps[(steps.count - 1) / 2]
    }

    /// The processes in the order of `processes`, then any only seen in samples, by name.
    var processNames: [String] {
        let listed = processes.map(\.name)
        let sampled = Set(timeline.flatMap(\.processes.keys)).subtracting(listed)
        var seen = Set<String>()
        return (listed + sampled.sorted()).filter { seen.insert($0).inserted }
    }
}
