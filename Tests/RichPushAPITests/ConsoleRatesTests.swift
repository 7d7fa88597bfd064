import RichPushQueue
import Testing

@testable import RichPushAPI

/// The overview's rates from two snapshots: per second, only for apps whose totals come from the same queue apps in both.
@Suite("Console overview rates")
struct ConsoleRatesTests {
    static func overview(_ apps: [ConsoleOverview.App]) -> ConsoleOverview {
        ConsoleOverview(apps: apps, workers: [], delayed: 0, deadLetters: 0, pending: 0, lag: 0, allApps: true, parkedComplete: true)
    }

    static func app(
        _ name: String, done: Int, retried: Int, dead: Int, queueApps: Set<String>? = nil, failed: [String: Int] = [:]
    ) -> ConsoleOverview.App {
        ConsoleOverview.App(
            app: name, stats: AppQueueStats(inFlight: 1, done: done, retried: retried, deadLettered: dead, failedByReason: failed),
            queueApps: queueApps ?? [name])
    }

    @Test func ratesAreTheTotalsChangePerSecondForAppsBusyInBothSnapshots() {
        let before = Self.overview([
            Self.app("shop", done: 10, retried: 2, dead: 1), Self.app("parked", done: 0, retried: 0, dead: 0, queueApps: []),
            Self.app("default", done: 5, retried: 0, dead: 0, queueApps: ["_"]),
            Self.app("reset", done: 50, retried: 5, dead: 5),
        ])
        let after = Self.overview([
            Self.app("shop", done: 30, retried: 6, dead: 3), Self.app("parked", done: 500, retried: 9, dead: 9),
            Self.app("reset", done: 1, retried: 0, dead: 0), Self.app("new", done: 7, retried: 0, dead: 0),
            Self.app("default", done: 905, retried: 0, dead: 0, queueApps: ["_", "default"]),
        ])
        let rates = Dictionary(uniqueKeysWithValues: after.withRates(since: before, seconds: 2).apps.map { ($0.app, $0.rates) })
        #expect(rates["shop"] == .some(ConsoleOverview.Rates(done: 10, retried: 2, deadLettered: 1)))
        #expect(rates["parked"] == .some(nil), "no jump from an idle row's zeros to the totals")
        #expect(rates["new"] == .some(nil), "no previous snapshot of it")
        #expect(rates["default"] == .some(nil), "its totals now add the default's own scope to `_`'s: not comparable")
        #expect(rates["reset"] == .some(ConsoleOverview.Rates(done: 0, retried: 0, deadLettered: 0)), "totals that went down (keys reset)")
        #expect(after.withRates(since: before, seconds: 0).apps.allSatisfy { $0.rates == nil })
        #expect(ConsoleOverview.rateCells(nil).text == "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>")
        #expect(
            ConsoleOverview.rateCells(.init(done: 12.25, retried: 0, deadLettered: 1, sent: 40)).text
                == "<td>40.0</td><td>12.2</td><td>0.0</td><td>1.0</td><td>none</td>")
    }

    /// Failed pushes per second by reason: each code's change, only the codes that moved, a code
    /// new since the previous snapshot from 0; the cell shows the fastest 3 and sums the rest.
    @Test func failuresPerSecondByReasonAreEachCodesChange() throws {
        let before = Self.overview([
            Self.app("shop", done: 1, retried: 0, dead: 0, failed: ["BadDeviceToken": 10, "Unregistered": 4, "http_500": 7])
        ])
        let after = Self.overview([
            Self.app(
                "shop", done: 1, retried: 0, dead: 0,
                failed: ["BadDeviceToken": 30, "Unregistered": 4, "http_500": 6, "timeout": 3, "other": 1, "UNREGISTERED": 2])
        ])
        let rates = try #require(after.withRates(since: before, seconds: 2).apps.first?.rates)
        #expect(
            rates.failedByReason == ["BadDeviceToken": 10, "timeout": 1.5, "other": 0.5, "UNREGISTERED": 1],
            "a code at rest or gone down is left out")
        #expect(ConsoleOverview.failures(rates.failedByReason) == "BadDeviceToken 10.0, timeout 1.5, UNREGISTERED 1.0, +1 more 0.5")
        #expect(ConsoleOverview.failures(["b": 1, "a": 1]) == "a 1.0, b 1.0", "ties by name")
        // Escaped: the code comes from Redis, which a buggy worker may have written.
        let cells = ConsoleOverview.rateCells(
            .init(done: 0, retried: 0, deadLettered: 0, failedByReason: ["<img src=x onerror=alert(1)>": 2]))
        #expect(cells.text.hasSuffix("<td>&lt;img src=x onerror=alert(1)&gt; 2.0</td>"), "\(cells.text)")
        // The JSON: totals on the row, rates by code under `rates`.
        let json = after.withRates(since: before, seconds: 2).apps[0].json
        #expect(
            json["failedByReason"] as? [String: Int] == [
                "BadDeviceToken": 30, "Unregistered": 4, "http_500": 6, "timeout": 3, "other": 1, "UNREGISTERED": 2,
            ])
        #expect((json["rates"] as? [String: Any])?["failedByReason"] as? [String: Double] == rates.failedByReason)
    }
}
