/// Horizontal bars, one per row, each labelled with its count and share of the total, and a
/// dashed line at the even share: how fairly the queue spread jobs over the workers.
///
/// Like `BarChart`, the bars are one `<g class="series">` with the counts as `data-values` and a
/// `data-count` on each `<rect class="bar">`. The height grows with the rows.
package struct ShareChart: Sendable {
    package struct Row: Sendable {
        package var label: String
        package var count: Int

        package init(label: String, count: Int) {
            self.label = label
            self.count = count
        }
    }

    package var id: String
    package var title: String
    package var width: Double
    package var seriesName: String
    package var rows: [Row]
    package var emptyText = "no samples"
    /// Said to assistive technology as the chart's `<desc>` (nil: none).
    package var description: String?

    package init(
        id: String, title: String, width: Double, seriesName: String, rows: [Row], emptyText: String = "no samples",
        description: String? = nil
    ) {
        self.id = id
        self.title = title
        self.width = width
        self.seriesName = seriesName
        self.rows = rows
        self.emptyText = emptyText
        self.description = description
    }

    private static let rowHeight = 24.0
    private static let labelSize = 12.0

    package var height: Double { 30 + 8 + Double(max(1, rows.count)) * Self.rowHeight + 30 }

    package func render(origin: (x: Double, y: Double)? = nil) -> String {
        let chart = SVGChart(id: id, title: title, width: width, height: height)
        let widest = rows.map { SVG.textWidth($0.label, fontSize: Self.labelSize) }.max() ?? 0
        let labelWidth = min(widest, width * 0.3)
        let valueWidth = 120.0
        let area = PlotArea(
            left: 8 + labelWidth + 8, top: 38, width: max(40, width - labelWidth - 24 - valueWidth),
            height: Double(max(1, rows.count)) * Self.rowHeight)
        let total = rows.reduce(0) { $0 + $1.count }
        let largest = Double(max(1, rows.map(\.count).max() ?? 1))

        var body = ""
        // Drawn first, so the bars and their figures lie on top of it.
        if rows.count > 1, total > 0 {
            let even = SVG.number(area.left + area.width * Double(total) / Double(rows.count) / largest)
            body +=
                "<g class=\"even-share\" font-size=\"11\" fill=\"\(Palette.muted)\"><line x1=\"\(even)\" y1=\"\(SVG.number(area.top))\" x2=\"\(even)\" y2=\"\(SVG.number(area.bottom + 4))\" stroke=\"\(Palette.ink)\" stroke-dasharray=\"4 3\"/>"
            body += "<text x=\"\(even)\" y=\"\(SVG.number(area.bottom + 18))\" text-anchor=\"middle\">even share</text></g>"
        }
        body +=
            "<g class=\"series\" data-name=\"\(seriesName.markupEscaped)\" data-values=\"\(SVG.values(rows.map { Double($0.count) }))\" fill=\"\(Palette.colors[0])\">"
        body += "<title>\(seriesName.markupEscaped)</title>"
        var labels = "<g class=\"labels\" font-size=\"\(SVG.number(Self.labelSize))\" fill=\"\(Palette.ink)\">"
        for (index, row) in rows.enumerated() {
            let top = area.top + Double(index) * Self.rowHeight
            let length = max(0, area.width * Double(row.count) / largest)
            let middle = SVG.number(top + Self.rowHeight / 2)
            let share = total > 0 ? NumberFormat.percent(Double(row.count) / Double(total)) : NumberFormat.missing
            body +=
                "<rect class=\"bar\" data-label=\"\(row.label.markupEscaped)\" data-count=\"\(row.count)\" x=\"\(SVG.number(area.left))\" y=\"\(SVG.number(top + 4))\""
            body +=
                " width=\"\(SVG.number(length))\" height=\"\(SVG.number(Self.rowHeight - 8))\"><title>\((row.label + ": " + NumberFormat.count(row.count) + " (" + share + ")").markupEscaped)</title></rect>"
            let shown = SVG.truncated(row.label, toWidth: labelWidth, fontSize: Self.labelSize)
            labels +=
                "<text x=\"\(SVG.number(area.left - 8))\" y=\"\(middle)\" dy=\"0.32em\" text-anchor=\"end\">\(shown.markupEscaped)</text>"
            labels +=
                "<text class=\"value\" stroke=\"#FFFFFF\" stroke-width=\"3\" paint-order=\"stroke\" x=\"\(SVG.number(area.left + length + 6))\" y=\"\(middle)\" dy=\"0.32em\">\(NumberFormat.count(row.count)) (\(share))</text>"
        }
        body += "</g>" + labels + "</g>"
        if rows.isEmpty { body += chart.emptyNote(emptyText, in: area) }
        return chart.render(origin: origin, description: description, body: body)
    }
}
