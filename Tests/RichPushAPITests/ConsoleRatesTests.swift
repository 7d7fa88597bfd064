@testable import RichPushAPI
import RichPushQueue
import Testing

/// The overview's rates from two snapshots: per second, only for apps whose totals come from the same scopes in both.
@Suite("Console overview rates")
struct ConsoleRatesTests {
    static func overview(_ apps: [ConsoleOverview.App]) -> ConsoleOverview {
        ConsoleOverview(apps: apps, workers: [], delayed: 0, deadLetters: 0, pending: 0, lag: 0, allApps: true, parkedComplete: true)
    }

    static func app(_ name: String, done: Int, retried: Int, dead: Int, scopes: Set<String>? = nil) -> ConsoleOverview.App {
        ConsoleOverview.App(app: name, stats: ScopeStats(inFlight: 1, done: done, retried: retried, deadLettered: dead), scopes: scopes ?? [name])
    }

    @Test func ratesAreTheTotalsChangePerSecondForAppsBusyInBothSnapshots() {
        let before = Self.overview([Self.app("shop", done: 10, retried: 2, dead: 1), Self.app("parked", done: 0, retried: 0, dead: 0, scopes: []),
                                    Self.app("default", done: 5, retried: 0, dead: 0, scopes: ["_"]),
                                    Self.app("reset", done: 50, retried: 5, dead: 5)])
        let after = Self.overview([Self.app("shop", done: 30, retried: 6, dead: 3), Self.app("parked", done: 500, retried: 9, dead: 9),
                                   Self.app("reset", done: 1, retried: 0, dead: 0), Self.app("new", done: 7, retried: 0, dead: 0),
                                   Self.app("default", done: 905, retried: 0, dead: 0, scopes: ["_", "default"])])
        let rates = Dictionary(uniqueKeysWithValues: after.withRates(since: before, seconds: 2).apps.map { ($0.app, $0.rates) })
        #expect(rates["shop"] == .some(ConsoleOverview.Rates(done: 10, retried: 2, deadLettered: 1)))
        #expect(rates["parked"] == .some(nil), "no jump from an idle row's zeros to the totals")
        #expect(rates["new"] == .some(nil), "no previous snapshot of it")
        #expect(rates["default"] == .some(nil), "its totals now add the default's own scope to `_`'s: not comparable")
        #expect(rates["reset"] == .some(ConsoleOverview.Rates(done: 0, retried: 0, deadLettered: 0)), "totals that went down (keys reset)")
        #expect(after.withRates(since: before, seconds: 0).apps.allSatisfy { $0.rates == nil })
        #expect(ConsoleOverview.rateCells(nil).text == "<td>-</td><td>-</td><td>-</td>")
        #expect(ConsoleOverview.rateCells(.init(done: 12.25, retried: 0, deadLettered: 1)).text == "<td>12.2</td><td>0.0</td><td>1.0</td>")
    }
}
