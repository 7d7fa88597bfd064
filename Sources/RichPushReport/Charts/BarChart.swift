/// Vertical bars over categories (the latency histogram), counts on top where they fit.
///
/// The bars are one `<g class="series">` whose `data-values` are the counts; each bar is a
/// `<rect class="bar" data-label="…" data-count="…">` with the exact range and share as its
/// tooltip. Category labels turn diagonal when they would not fit side by side.
struct BarChart: Sendable {
    struct Bar: Sendable {
        /// Under the bar: `≤2 ms`.
        var label: String
        /// The tooltip's name for the bar: `1–2 ms`.
        var detail: String
        var count: Int
    }

    var chart: SVGChart
    var seriesName: String
    var xLabel: String
    var yLabel: String
    var bars: [Bar]
    var emptyText = "no samples"

    private static let labelSize = 11.0

    func render(origin: (x: Double, y: Double)? = nil) -> String {
        let top = chart.headerHeight(legend: []) + 8
        let plotWidth = chart.width - 58 - 18
        let slot = plotWidth / Double(max(1, bars.count))
        let widest = bars.map { SVG.textWidth($0.label, fontSize: Self.labelSize) }.max() ?? 0
        let diagonal = widest > slot - 4
        let labelDepth = diagonal ? min(widest * 0.64 + 10, 80) : 16
        let area = PlotArea(left: 58, top: top, width: plotWidth, height: chart.height - top - labelDepth - 30)
        let scale = NiceScale(low: 0, high: Double(bars.map(\.count).max() ?? 0), targetTicks: area.height < 160 ? 4 : 5)
        let total = bars.reduce(0) { $0 + $1.count }

        var body = area.yAxis(scale, label: yLabel)
        body +=
            "<line x1=\"\(SVG.number(area.left))\" y1=\"\(SVG.number(area.bottom))\" x2=\"\(SVG.number(area.right))\" y2=\"\(SVG.number(area.bottom))\" stroke=\"\(Palette.axis)\"/>"
        body +=
            "<g class=\"series\" data-name=\"\(seriesName.markupEscaped)\" data-values=\"\(SVG.values(bars.map { Double($0.count) }))\" fill=\"\(Palette.colors[0])\">"
        body += "<title>\(seriesName.markupEscaped)</title>"
        var labels = "<g class=\"categories\" font-size=\"\(SVG.number(Self.labelSize))\" fill=\"\(Palette.muted)\">"
        for (index, bar) in bars.enumerated() {
            let center = area.left + slot * (Double(index) + 0.5)
            let y = min(area.bottom, area.y(Double(bar.count), on: scale))
            let share = total > 0 ? " (" + NumberFormat.percent(Double(bar.count) / Double(total)) + ")" : ""
            body +=
                "<rect class=\"bar\" data-label=\"\(bar.label.markupEscaped)\" data-count=\"\(bar.count)\" x=\"\(SVG.number(center - slot * 0.4))\" y=\"\(SVG.number(y))\""
            body += " width=\"\(SVG.number(slot * 0.8))\" height=\"\(SVG.number(area.bottom - y))\">"
            body += "<title>\((bar.detail + ": " + NumberFormat.count(bar.count) + share).markupEscaped)</title></rect>"
            var countText = NumberFormat.count(bar.count)
            if SVG.textWidth(countText, fontSize: 10) > slot, bar.count >= 1000 {
                countText = NumberFormat.decimal(Double(bar.count) / 1000, maxPlaces: 1) + "k"  // 22,213 → 22.2k
            }
            if bar.count > 0, SVG.textWidth(countText, fontSize: 10) <= slot {
                labels +=
                    "<text x=\"\(SVG.number(center))\" y=\"\(SVG.number(y - 4))\" text-anchor=\"middle\" font-size=\"10\" fill=\"\(Palette.ink)\">\(countText)</text>"
            }
            let labelY = SVG.number(area.bottom + 14)
            if diagonal {
                labels +=
                    "<text x=\"\(SVG.number(center + 3))\" y=\"\(labelY)\" text-anchor=\"end\" transform=\"rotate(-40 \(SVG.number(center + 3)) \(labelY))\">\(bar.label.markupEscaped)</text>"
            } else {
                labels += "<text x=\"\(SVG.number(center))\" y=\"\(labelY)\" text-anchor=\"middle\">\(bar.label.markupEscaped)</text>"
            }
        }
        body += "</g>" + labels + "</g>"
        body +=
            "<text x=\"\(SVG.number(area.left + area.width / 2))\" y=\"\(SVG.number(chart.height - 8))\" text-anchor=\"middle\" font-size=\"11\" fill=\"\(Palette.muted)\">\(xLabel.markupEscaped)</text>"
        if bars.isEmpty { body += chart.emptyNote(emptyText, in: area) }
        return chart.render(origin: origin, body: body)
    }
}
