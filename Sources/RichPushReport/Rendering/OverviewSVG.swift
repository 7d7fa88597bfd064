/// The load test at a glance as one standalone SVG picture (960 × 640, white, nothing from
/// elsewhere), the one committed as docs/loadtest-report.svg: a headline of the figures that matter, then
/// throughput, latency over time, the latency distribution and the queue in a 2 × 2 grid.
package enum OverviewSVG {
    static let width = 960.0
    static let height = 640.0
    private static let headline = 124.0

    /// The picture for `report`.
    package static func render(_ report: LoadReport) -> String {
        var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg +=
            "<svg xmlns=\"\(SVG.namespace)\" class=\"overview\" width=\"\(SVG.number(width))\" height=\"\(SVG.number(height))\" viewBox=\"0 0 \(SVG.number(width)) \(SVG.number(height))\""
        svg += " font-family=\"\(SVG.fontFamily)\" role=\"img\" aria-label=\"RichPush load test overview\">\n"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"/>\n"
        svg += headlineMarkup(report)
        let cell = (width: width / 2, height: (height - headline) / 2)
        let size = (width: cell.width - 12, height: cell.height - 8)
        let charts = [
            report.throughputChart(width: size.width, height: size.height).render(origin: (6, headline)),
            report.latencyChart(width: size.width, height: size.height).render(origin: (cell.width + 6, headline)),
            report.histogramChart(width: size.width, height: size.height).render(origin: (6, headline + cell.height)),
            report.queueChart(width: size.width, height: size.height).render(origin: (cell.width + 6, headline + cell.height)),
        ]
        svg += charts.joined(separator: "\n")
        return svg + "\n</svg>\n"
    }

    /// The title, the settings line, and four big figures: delivered/s, p99, lost, duplicated.
    private static func headlineMarkup(_ report: LoadReport) -> String {
        let summary = report.summary
        var svg = "<g class=\"headline\">"
        svg += "<text x=\"16\" y=\"32\" font-size=\"22\" font-weight=\"700\" fill=\"\(Palette.ink)\">RichPush load test</text>"
        let line = report.settings.line + " · " + NumberFormat.fixed(summary.seconds, places: 1) + " s"
        svg += "<text x=\"16\" y=\"54\" font-size=\"13\" fill=\"\(Palette.muted)\">\(line.markupEscaped)</text>"
        let p99 = summary.enqueueToDeviceMs.map { NumberFormat.latency($0.p99) + " ms" } ?? NumberFormat.missing
        let figures: [(key: String, value: String, caption: String, bad: Bool)] = [
            ("deliveredPerSecond", NumberFormat.rate(summary.deliveredPerSecond), "pushes/s delivered to devices", false),
            ("p99", p99, "p99 enqueue → device", false),
            ("lost", NumberFormat.count(summary.lost), "lost", summary.lost > 0),
            ("duplicated", NumberFormat.count(summary.duplicated), "duplicated", summary.duplicated > 0),
        ]
        for (index, figure) in figures.enumerated() {
            let x = SVG.number(16 + Double(index) * width / 4)
            let color = figure.bad ? Palette.bad : Palette.ink
            svg +=
                "<text class=\"figure\(figure.bad ? " bad" : "")\" data-key=\"\(figure.key)\" x=\"\(x)\" y=\"\(SVG.number(headline - 30))\" font-size=\"30\" font-weight=\"700\" fill=\"\(color)\">\(figure.value.markupEscaped)</text>"
            svg +=
                "<text x=\"\(x)\" y=\"\(SVG.number(headline - 12))\" font-size=\"12\" fill=\"\(Palette.muted)\">\(figure.caption.markupEscaped)</text>"
        }
        return svg + "</g>\n"
    }
}
