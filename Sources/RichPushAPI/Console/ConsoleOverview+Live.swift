import Foundation
import RichPushReport

/// The overview's rates (from two successive snapshots of the live stream) and the workers'
/// share as a chart.
extension ConsoleOverview {
    /// This snapshot with each app's rates since `previous`, `seconds` earlier: only for an app
    /// whose totals came from the same busy queue apps in both (an idle app's row carries no totals,
    /// so a rate across it would be a jump, not a rate), a total that went down (keys reset) as 0.
    func withRates(since previous: ConsoleOverview, seconds: Double) -> ConsoleOverview {
        guard seconds > 0 else { return self }
        let before = Dictionary(previous.apps.map { ($0.app, $0) }, uniquingKeysWith: { first, _ in first })
        var next = self
        next.apps = apps.map { app in
            guard !app.queueApps.isEmpty, let old = before[app.app].flatMap({ $0.queueApps == app.queueApps ? $0.stats : nil }) else {
                return app
            }
            func rate(_ now: Int, _ then: Int) -> Double { (Double(max(now - then, 0)) / seconds * 10).rounded() / 10 }
            var app = app
            app.rates = Rates(
                done: rate(app.stats.done, old.done), retried: rate(app.stats.retried, old.retried),
                deadLettered: rate(app.stats.deadLettered, old.deadLettered),
                // The codes that moved: one at 0 would only crowd the cell.
                failedByReason: Dictionary(
                    uniqueKeysWithValues: app.stats.failedByReason.compactMap { code, total in
                        let perSecond = rate(total, old.failedByReason[code] ?? 0)
                        return perSecond > 0 ? (code, perSecond) : nil
                    }), sent: rate(app.stats.sent, old.sent))
            return app
        }
        return next
    }

    static func rateCells(_ rates: Rates?) -> HTML {
        guard let rates else { return "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>" }
        return
            "<td>\(rate(rates.sent))</td><td>\(rate(rates.done))</td><td>\(rate(rates.retried))</td><td>\(rate(rates.deadLettered))</td><td>\(failures(rates.failedByReason))</td>"
    }

    /// Codes shown by name in the "failed/s by reason" cell; the rest are summed.
    static let shownReasons = 3

    /// The fastest ``shownReasons`` codes with their rates (`BadDeviceToken 2.0, http_500 0.5`),
    /// the rest summed (`+2 more 0.7`); `none` when nothing failed. The page's script writes the same.
    static func failures(_ perSecond: [String: Double]) -> String {
        guard !perSecond.isEmpty else { return "none" }
        let ranked = perSecond.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        var parts = ranked.prefix(shownReasons).map { "\($0.key) \(rate($0.value))" }
        let rest = ranked.dropFirst(shownReasons)
        if !rest.isEmpty { parts.append("+\(rest.count) more \(rate(rest.reduce(0) { $0 + $1.value }))") }
        return parts.joined(separator: ", ")
    }

    static func rate(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Each worker's share of the jobs processed, as the load report draws it (an inline SVG
    /// with a title, a description and text labels; every name escaped by the chart).
    var workersChart: HTML {
        guard !workers.isEmpty else { return "" }
        let rows = workers.map { ShareChart.Row(label: $0.name, count: $0.processed) }
        let total = rows.reduce(0) { $0 + $1.count }
        let description =
            "Jobs processed by each of \(workers.count) workers, \(total) in all: "
            + rows.map { "\($0.label) \($0.count)" }.joined(separator: ", ")
        let chart = ShareChart(
            id: "workers-share", title: "Each worker's share of jobs processed", width: 640, seriesName: "jobs processed",
            rows: rows, emptyText: "no jobs processed yet", description: description)
        // The chart escapes every value it writes (names, labels, the description).
        return
            "<figure class=\"chart\">\(HTML(trusted: chart.render()))<figcaption>Drawn at page load; reload for new shares.</figcaption></figure>"
    }
}

extension ConsoleOverview.App {
    /// Its row in the JSON (`failedByReason`: its failed pushes' totals by reason code); `rates`
    /// only from the stream's second snapshot on.
    var json: [String: Any] {
        var object: [String: Any] = [
            "app": app, "waiting": stats.waiting, "oldestWaitingMs": stats.oldestWaitingAgeMilliseconds,
            "inFlight": stats.inFlight, "done": stats.done, "weight": stats.weight, "paused": stats.paused, "scheduled": scheduled,
            "retrying": retrying, "dead": dead, "retried": stats.retried, "deadLettered": stats.deadLettered,
            "failedByReason": stats.failedByReason, "sent": stats.sent,
        ]
        if let rates {
            object["rates"] =
                [
                    "sent": rates.sent, "done": rates.done, "retried": rates.retried, "deadLettered": rates.deadLettered,
                    "failedByReason": rates.failedByReason,
                ] as [String: Any]
        }
        return object
    }
}
