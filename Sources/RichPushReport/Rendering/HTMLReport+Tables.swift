/// The page's text: what ran, the verdict, and the tables of figures.
extension HTMLReport {
    /// Title, the settings line, the command, and whether every push arrived exactly once.
    static func header(_ report: LoadReport) -> String {
        let settings = report.settings, summary = report.summary
        var html = "<h1>RichPush load test</h1>\n"
        html += "<p class=\"settings\">\(settings.line.markupEscaped) · started \(settings.startedAt.markupEscaped)</p>\n"
        html += "<p class=\"command\"><code>\(settings.command.markupEscaped)</code></p>\n"
        let problems = [(summary.lost, "lost"), (summary.duplicated, "duplicated"), (summary.failed, "failed")].filter { $0.0 > 0 }
        if problems.isEmpty {
            html +=
                "<p class=\"verdict ok\">No push lost or duplicated: \(NumberFormat.count(summary.delivered)) of \(NumberFormat.count(summary.pushesExpected)) expected pushes delivered.</p>\n"
        } else {
            let list = problems.map { "\(NumberFormat.count($0.0)) \($0.1)" }.joined(separator: ", ")
            html += "<p class=\"verdict bad\">\(list) of \(NumberFormat.count(summary.pushesExpected)) expected pushes.</p>\n"
        }
        return html
    }

    /// Rates, counts and the duration; lost, duplicated and failed in red when not zero.
    static func summaryTable(_ report: LoadReport) -> String {
        let summary = report.summary
        let rich = report.settings.isRich || summary.notified > 0
        var rows = [
            row("Pushes delivered to devices per second", NumberFormat.rate(summary.deliveredPerSecond), key: "deliveredPerSecond")
        ]
        if rich {
            rows.append(
                row(
                    "Local notifications per second", NumberFormat.rate(summary.notifiedPerSecond), key: "notifiedPerSecond",
                    note: "after the background fetch"))
        }
        rows.append(
            row(
                "Pushes delivered", NumberFormat.count(summary.delivered), key: "delivered",
                note: "of \(NumberFormat.count(summary.pushesExpected)) expected"))
        if rich { rows.append(row("Local notifications shown", NumberFormat.count(summary.notified), key: "notified")) }
        rows += [
            row("Lost", NumberFormat.count(summary.lost), key: "lost", bad: summary.lost > 0, note: "expected, never delivered"),
            row(
                "Duplicated", NumberFormat.count(summary.duplicated), key: "duplicated", bad: summary.duplicated > 0,
                note: "delivered more than once"),
            row("Failed", NumberFormat.count(summary.failed), key: "failed", bad: summary.failed > 0, note: "reported failed by a device"),
            row("Duration", NumberFormat.fixed(summary.seconds, places: 1), key: "seconds", note: "seconds"),
        ]
        return "<table class=\"summary\">\n<tbody>\n" + rows.joined() + "</tbody>\n</table>\n"
    }

    /// p50, p90, p99 and max of both latencies, in milliseconds.
    static func latencyTable(_ report: LoadReport) -> String {
        var rows = [("Enqueue → device", "enqueueToDeviceMs", report.summary.enqueueToDeviceMs)]
        if report.settings.isRich || report.summary.enqueueToNotificationMs != nil {
            rows.append(("Enqueue → notification", "enqueueToNotificationMs", report.summary.enqueueToNotificationMs))
        }
        var html =
            "<table class=\"latency\">\n<thead><tr><th>Latency, ms</th><th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p99</th><th class=\"num\">max</th><th class=\"num\">samples</th></tr></thead>\n<tbody>\n"
        for (label, key, percentiles) in rows {
            html += "<tr><th>\(label.markupEscaped)</th>"
            if let percentiles {
                for (name, value) in [
                    ("p50", percentiles.p50), ("p90", percentiles.p90), ("p99", percentiles.p99), ("max", percentiles.max),
                ] {
                    html += "<td class=\"num\" data-key=\"\(key).\(name)\">\(NumberFormat.latency(value))</td>"
                }
                html += "<td class=\"num\" data-key=\"\(key).count\">\(NumberFormat.count(percentiles.count))</td>"
            } else {
                html += "<td colspan=\"5\" class=\"none\" data-key=\"\(key)\">no samples</td>"
            }
            html += "</tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    /// Peak memory and CPU time of each process.
    static func processTable(_ report: LoadReport) -> String {
        guard !report.processes.isEmpty else { return "<p class=\"none\">No process was sampled.</p>\n" }
        let seconds = report.summary.seconds
        var html =
            "<table class=\"processes\">\n<thead><tr><th>Process</th><th class=\"num\">PID</th><th class=\"num\">Peak RSS, MiB</th><th class=\"num\">CPU, s</th><th class=\"num\">Mean CPU</th><th class=\"num\">CPU µs per notification</th></tr></thead>\n<tbody>\n"
        let budget = report.cpuBudget
        for (index, process) in report.processes.enumerated() {
            let mean = seconds > 0 ? NumberFormat.percent(process.cpuSeconds / seconds) : NumberFormat.missing
            let perNotification =
                index < budget.count ? NumberFormat.fixed(budget[index].microsPerNotification, places: 1) : NumberFormat.missing
            html += "<tr><th>\(process.name.markupEscaped)</th><td class=\"num\">\(process.pid)</td>"
            html += "<td class=\"num\" data-key=\"peakRSSMiB\">\(NumberFormat.fixed(process.peakRSSMiB, places: 1))</td>"
            html +=
                "<td class=\"num\" data-key=\"cpuSeconds\">\(NumberFormat.fixed(process.cpuSeconds, places: 1))</td><td class=\"num\">\(mean)</td>"
            html += "<td class=\"num\" data-key=\"cpuMicrosPerNotification\">\(perNotification)</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    private static func row(_ label: String, _ value: String, key: String, bad: Bool = false, note: String = "") -> String {
        "<tr><th>\(label.markupEscaped)</th><td class=\"num\(bad ? " bad" : "")\" data-key=\"\(key)\">\(value)</td><td class=\"note\">\(note.markupEscaped)</td></tr>\n"
    }
}
