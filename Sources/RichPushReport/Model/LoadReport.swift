package import Foundation

/// Everything `richpush loadtest --report DIR` measured, as written to `DIR/report.json`.
///
/// One value feeds every renderer (`HTMLReport`, `OverviewSVG`, `SummaryText`), so the page, the
/// picture in docs/load-tests.md and the terminal lines never disagree. Property names are the JSON keys.
package struct LoadReport: Codable, Sendable, Equatable {
    /// How the run was set up.
    package var settings: Settings
    /// The headline figures of the whole run.
    package var summary: Summary
    /// One sample per sampling interval (normally 1 s), oldest first.
    package var timeline: [Sample]
    /// The enqueue → device latency distribution over the whole run.
    package var histogram: [HistogramBucket]
    /// Jobs handled per worker consumer.
    package var workers: [WorkerShare]
    /// Peak RSS and CPU time per process of the pipeline.
    package var processes: [ProcessSummary]

    package init(
        settings: Settings, summary: Summary, timeline: [Sample], histogram: [HistogramBucket], workers: [WorkerShare],
        processes: [ProcessSummary]
    ) {
        self.settings = settings
        self.summary = summary
        self.timeline = timeline
        self.histogram = histogram
        self.workers = workers
        self.processes = processes
    }
}

extension LoadReport {
    /// The report as pretty-printed JSON with sorted keys, so two runs diff line by line.
    ///
    /// Non-finite numbers (a rate over a zero-length run) are written as the strings `"NaN"`,
    /// `"Infinity"` and `"-Infinity"` rather than failing the whole report at the end of a run.
    package func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: Self.infinity, negativeInfinity: "-" + Self.infinity, nan: Self.nan)
        return try encoder.encode(self)
    }

    /// Reads a report written by `jsonData()`.
    package static func decode(from data: Data) throws -> LoadReport {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: infinity, negativeInfinity: "-" + infinity, nan: nan)
        return try decoder.decode(LoadReport.self, from: data)
    }

    private static let infinity = "Infinity"
    private static let nan = "NaN"
}
