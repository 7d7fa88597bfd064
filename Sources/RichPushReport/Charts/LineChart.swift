/// Named series of (x, y) points over time, drawn as lines on nice axes with a legend.
///
/// Each series is a `<g class="series" data-name="…" data-values="…">` whose `data-values` are
/// the y values drawn, in order. A series breaks where samples are missing (a step in x over 1.5
/// sampling intervals) instead of drawing a line across time it knows nothing about.
struct LineChart: Sendable {
    struct Series: Sendable {
        var name: String
        var points: [(x: Double, y: Double)]
    }

    var chart: SVGChart
    var xLabel = "seconds since start"
    var yLabel: String
    var series: [Series]
    /// The usual step in x between samples; nil to take each series' median step.
    var interval: Double?
    /// Shown instead of lines when no series has a point.
    var emptyText = "no samples"

    func render(origin: (x: Double, y: Double)? = nil) -> String {
        let legend = series.enumerated().map { SVGChart.LegendEntry(name: $1.name, stroke: Palette.stroke($0)) }
        let top = chart.headerHeight(legend: legend) + 8
        let area = PlotArea(left: 58, top: top, width: chart.width - 58 - 18, height: chart.height - top - 42)
        let drawn = series.map { $0.points.filter { $0.x.isFinite && $0.y.isFinite } }
        let all = drawn.joined()
        let xScale = NiceScale(
            low: min(0, all.map(\.x).min() ?? 0), high: all.map(\.x).max() ?? 0, targetTicks: area.width < 500 ? 5 : 8, extendToTicks: false
        )
        let yScale = NiceScale(low: min(0, all.map(\.y).min() ?? 0), high: all.map(\.y).max() ?? 0, targetTicks: area.height < 160 ? 4 : 5)

        var body = area.yAxis(yScale, label: yLabel) + area.xAxis(xScale, label: xLabel)
        for (index, points) in drawn.enumerated() {
            body += seriesMarkup(name: series[index].name, points: points, stroke: Palette.stroke(index), area: area, x: xScale, y: yScale)
        }
        if all.isEmpty { body += chart.emptyNote(emptyText, in: area) }
        return chart.render(origin: origin, legend: legend, body: body)
    }

    private func seriesMarkup(
        name: String, points: [(x: Double, y: Double)], stroke: Palette.Stroke, area: PlotArea, x: NiceScale, y: NiceScale
    ) -> String {
        let peak = points.map(\.y).max().map { ", max " + NumberFormat.decimal($0, maxPlaces: 1) } ?? ", no points"
        var svg = "<g class=\"series\" data-name=\"\(name.markupEscaped)\" data-values=\"\(SVG.values(points.map(\.y)))\""
        svg += " fill=\"none\" \(stroke.attributes) stroke-width=\"2\" stroke-linejoin=\"round\" stroke-linecap=\"round\">"
        svg += "<title>\((name + peak).markupEscaped)</title>"
        for run in Self.runs(of: points, interval: interval) {
            let coordinates = run.map { (x: SVG.number(area.x($0.x, on: x)), y: SVG.number(area.y($0.y, on: y))) }
            if let only = coordinates.first, coordinates.count == 1 {
                svg += "<circle cx=\"\(only.x)\" cy=\"\(only.y)\" r=\"2.5\" fill=\"\(stroke.color)\" stroke=\"none\"/>"
            } else {
                svg += "<path d=\"M" + coordinates.map { "\($0.x),\($0.y)" }.joined(separator: "L") + "\"/>"
            }
        }
        return svg + "</g>"
    }

    /// `points` split where the step in x is more than 1.5 times `interval` (or the median step).
    static func runs(of points: [(x: Double, y: Double)], interval: Double?) -> [[(x: Double, y: Double)]] {
        guard let first = points.first else { return [] }
        let steps = zip(points, points.dropFirst()).map { $1.x - $0.x }
        guard let usual = interval ?? (steps.isEmpty ? nil : steps.sorted()[steps.count / 2]), usual > 0 else { return [points] }
        var runs = [[first]]
        for (step, point) in zip(steps, points.dropFirst()) {
            if step > usual * 1.5 { runs.append([point]) } else { runs[runs.count - 1].append(point) }
        }
        return runs
    }
}
