import Foundation
import Hiredis
import RichPushCommands

/// The wall time of each adapter call of a benchmark, and the figures its report prints.
struct BatchTimings {
    private var milliseconds: [Double] = []

    mutating func record(_ duration: Duration) {
        milliseconds.append(duration.milliseconds)
    }

    /// Another run's timings added to these.
    mutating func merge(_ other: BatchTimings) {
        milliseconds += other.milliseconds
    }

    /// Median and 99th percentile, in milliseconds.
    var percentiles: (p50: Double, p99: Double) {
        let sorted = milliseconds.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    /// This process's peak resident memory.
    static var peakRSS: String {
        ProcessProbe(name: "self", pid: getpid()).read().map { String(format: "%.0f MiB", $0.peakRSSMiB) } ?? "?"
    }
}
