import Testing

@testable import RichPushReport

@Suite("Chart primitives")
struct ChartTests {
    @Test(arguments: [
        (0.0, 500.0, [0.0, 100, 200, 300, 400, 500]),
        (0, 22417, [0, 5000, 10000, 15000, 20000, 25000]),
        (0, 7.3, [0, 2, 4, 6, 8]),
        (0, 0.9, [0, 0.2, 0.4, 0.6, 0.8, 1]),
        (0, 0, [0, 0.2, 0.4, 0.6, 0.8, 1]),
        (-3, 12, [-5, 0, 5, 10, 15]),
    ])
    func niceTicks(low: Double, high: Double, ticks: [Double]) {
        #expect(NiceScale(low: low, high: high).ticks == ticks)
    }

    @Test func timeAxesEndAtTheData() {
        let scale = NiceScale(low: 0, high: 89.2, targetTicks: 5, extendToTicks: false)
        #expect(scale.ticks == [0, 20, 40, 60, 80])
        #expect(scale.upper == 89.2)
        #expect(scale.fraction(89.2) == 1)
    }

    @Test func tickLabelsShareAUnit() {
        let thousands = NiceScale(low: 0, high: 22417)
        #expect(thousands.ticks.map(thousands.label) == ["0", "5k", "10k", "15k", "20k", "25k"])
        let millions = NiceScale(low: 0, high: 2_400_000)
        #expect(millions.ticks.map(millions.label) == ["0", "0.5M", "1M", "1.5M", "2M", "2.5M"])
        let small = NiceScale(low: 0, high: 7000)
        #expect(small.ticks.map(small.label) == ["0", "2,000", "4,000", "6,000", "8,000"])
    }

    @Test func textIsEscaped() {
        #expect("a<b&c \"d\" 'e'>".markupEscaped == "a&lt;b&amp;c &quot;d&quot; &#39;e&#39;&gt;")
        #expect("bell\u{7}tab\t".markupEscaped == "belltab\t")
    }

    @Test func linesBreakAtMissingIntervals() {
        let points: [(x: Double, y: Double)] = [(1, 1), (2, 1), (3, 1), (6, 1), (7, 1)]
        #expect(LineChart.runs(of: points, interval: nil).map { $0.map(\.x) } == [[1, 2, 3], [6, 7]])
        #expect(LineChart.runs(of: [(1, 1), (5, 1)], interval: nil).count == 1)
        #expect(LineChart.runs(of: [(1, 1), (4, 1), (5, 1)], interval: 1).map { $0.map(\.x) } == [[1], [4, 5]])
    }

    @Test func histogramLabels() {
        let buckets =
            [0.25, 0.5, 1, 1024, 8192, 65536].map { HistogramBucket(upperMs: $0, count: 1) } + [HistogramBucket(upperMs: nil, count: 1)]
        let labels = HistogramBucket.labels(buckets)
        #expect(labels.map(\.label) == ["≤0.25 ms", "≤0.5 ms", "≤1 ms", "≤1 s", "≤8.1 s", "≤65 s", "> 65 s"])
        #expect(
            labels.map(\.detail) == [
                "0–0.25 ms", "0.25–0.5 ms", "0.5–1 ms", "1–1,024 ms", "1,024–8,192 ms", "8,192–65,536 ms", "over 65,536 ms",
            ])
    }

    @Test func paletteRepeatsWithDashes() {
        #expect(Palette.stroke(0).dash == nil)
        #expect(Palette.stroke(Palette.colors.count) == Palette.Stroke(color: Palette.colors[0], dash: "6 3"))
    }
}
