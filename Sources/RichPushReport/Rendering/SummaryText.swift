/// The few lines `richpush loadtest` prints when it finishes: throughput, latency, anything lost,
/// and memory, aligned in two columns. Local notification lines only in rich mode.
package enum SummaryText {
    private static let labelWidth = 23

    /// The summary of `report`, lines separated by `\n`, without a final newline.
    package static func render(_ report: LoadReport) -> String {
        let summary = report.summary
        let rich = report.settings.isRich
        var lines = [
            line(
                "delivered to devices",
                "\(NumberFormat.rate(summary.deliveredPerSecond)) pushes/s (\(NumberFormat.count(summary.delivered)) in \(NumberFormat.fixed(summary.seconds, places: 1)) s)"
            )
        ]
        if rich {
            lines.append(line("local notifications", "\(NumberFormat.rate(summary.notifiedPerSecond)) /s (after the background fetch)"))
        }
        lines.append(line("enqueue -> device", latency(summary.enqueueToDeviceMs)))
        if rich { lines.append(line("enqueue -> notified", latency(summary.enqueueToNotificationMs))) }
        lines.append(
            "lost \(NumberFormat.count(summary.lost))  duplicated \(NumberFormat.count(summary.duplicated))  failed \(NumberFormat.count(summary.failed))"
        )
        if !report.processes.isEmpty {
            lines.append(
                line(
                    "peak RSS MiB",
                    report.processes.map { "\($0.name) \(NumberFormat.fixed($0.peakRSSMiB, places: 1))" }.joined(separator: ", ")))
        }
        let budget = report.cpuBudget
        if !budget.isEmpty {
            let service = budget.filter { $0.name != LoadReport.loadGeneratorName }
            let generator = budget.first { $0.name == LoadReport.loadGeneratorName }
            var text = service.map { "\($0.name) \(NumberFormat.fixed($0.microsPerNotification, places: 1))" }.joined(separator: ", ")
            text += "; service \(NumberFormat.fixed(report.serviceCPUMicrosPerNotification, places: 1))"
            if let generator { text += " (load generator \(NumberFormat.fixed(generator.microsPerNotification, places: 1)) apart)" }
            lines.append(line("CPU µs / notification", text))
        }
        return lines.joined(separator: "\n")
    }

    private static func latency(_ percentiles: Percentiles?) -> String {
        guard let p = percentiles else { return "no samples" }
        return
            "ms: p50 \(NumberFormat.latency(p.p50))  p90 \(NumberFormat.latency(p.p90))  p99 \(NumberFormat.latency(p.p99))  max \(NumberFormat.latency(p.max))"
    }

    private static func line(_ label: String, _ value: String) -> String {
        label.padding(to: labelWidth) + value
    }
}

private extension String {
    /// Padded with spaces to `width` characters, and one space at least.
    func padding(to width: Int) -> String {
        self + String(repeating: " ", count: Swift.max(1, width - count))
    }
}
