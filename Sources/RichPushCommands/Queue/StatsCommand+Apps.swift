import Foundation
import RichPushQueue

/// `richpush stats`'s per-app table (fair scheduling): the busiest apps, what waits in their
/// lanes, the oldest wait, what they have in flight, their totals (jobs taken and done, pushes
/// failed: `--json` has them by reason), weight and cap; a paused app says so after its name.
extension StatsCommand {
    /// Apps shown in the table; `--json` lists them all.
    static let appRows = 20

    /// The table of the ``appRows`` busiest apps (most waiting and in flight); `rates`: jobs done
    /// per second by app, shown as a column when given (`--watch`, from two reads).
    static func appTable(_ apps: [String: AppQueueStats], rates: [String: Double]? = nil) -> String {
        guard !apps.isEmpty else { return "apps: none waiting or in flight\n" }
        let (shown, more) = AppQueueStats.busiest(apps, limit: appRows)
        var header = ["app", "weight", "cap", "now", "bulk", "oldest", "in flight", "taken", "done", "failed pushes"]
        if rates != nil { header.append("done/s") }
        var rows = [header]
        for (app, stats) in shown {
            var row = [
                app + (stats.paused ? " (paused)" : ""), "\(stats.weight)", stats.maxInFlight.map(String.init) ?? "-",
                "\(stats.waitingNow)", "\(stats.waitingBulk)",
                stats.waiting > 0 ? String(format: "%.1f s", Double(stats.oldestWaitingAgeMilliseconds) / 1000) : "-",
                "\(stats.inFlight)", "\(stats.taken)", "\(stats.done)", "\(stats.failedByReason.values.reduce(0, +))",
            ]
            if let rates { row.append(rates[app].map { String(format: "%.0f", $0) } ?? "-") }
            rows.append(row)
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var text = "apps with work or in flight: \(apps.count)\(more > 0 ? " (the \(appRows) busiest shown; --json lists all)" : "")\n"
        for row in rows {
            text +=
                "  "
                + row.enumerated().map { column, cell in
                    column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  ") + "\n"
        }
        return text
    }

    /// Jobs done per second by app between two reads `seconds` apart (apps in both reads only).
    static func doneRates(_ now: [String: AppQueueStats], since before: [String: AppQueueStats], seconds: Double) -> [String: Double] {
        var rates: [String: Double] = [:]
        for (app, stats) in now {
            if let previous = before[app] { rates[app] = Double(max(stats.done - previous.done, 0)) / max(seconds, 0.001) }
        }
        return rates
    }
}
