/// The frame every chart is drawn in: the `<svg class="chart" data-chart="…">` element with its
/// size, white background, title and legend. Tests find charts by `data-chart`.
struct SVGChart: Sendable {
    /// A legend entry: a short line in the series' stroke, then its name.
    struct LegendEntry: Sendable {
        var name: String
        var stroke: Palette.Stroke
    }

    var id: String
    var title: String
    var width: Double
    var height: Double

    private static let titleSize = 14.0
    private static let legendSize = 12.0
    private static let rowHeight = 20.0

    /// Where the plot may start: below the title, and below the legend if it needs a row.
    func headerHeight(legend: [LegendEntry]) -> Double {
        legendFitsBesideTitle(legend) ? 30 : 30 + Self.rowHeight
    }

    /// The whole chart around `body`. `origin` places it inside a larger SVG (the overview
    /// picture); nil for a chart on its own.
    /// `description`: a `<title>` and `<desc>` first in the chart, for assistive technology.
    func render(origin: (x: Double, y: Double)? = nil, legend: [LegendEntry] = [], description: String? = nil, body: String) -> String {
        let size = "width=\"\(SVG.number(width))\" height=\"\(SVG.number(height))\""
        let place = origin.map { " x=\"\(SVG.number($0.x))\" y=\"\(SVG.number($0.y))\"" } ?? ""
        var svg =
            "<svg xmlns=\"\(SVG.namespace)\" class=\"chart\" data-chart=\"\(id.markupEscaped)\" role=\"img\" aria-label=\"\(title.markupEscaped)\""
        svg += " \(size)\(place) viewBox=\"0 0 \(SVG.number(width)) \(SVG.number(height))\" font-family=\"\(SVG.fontFamily)\">"
        if let description { svg += "<title>\(title.markupEscaped)</title><desc>\(description.markupEscaped)</desc>" }
        svg += "<rect class=\"background\" width=\"\(SVG.number(width))\" height=\"\(SVG.number(height))\" fill=\"#FFFFFF\"/>"
        svg +=
            "<text class=\"title\" x=\"8\" y=\"20\" font-size=\"\(SVG.number(Self.titleSize))\" font-weight=\"600\" fill=\"\(Palette.ink)\">\(title.markupEscaped)</text>"
        svg += legendMarkup(legend)
        return svg + body + "</svg>"
    }

    /// A placeholder across the plot when there is nothing to draw.
    func emptyNote(_ text: String, in area: PlotArea) -> String {
        "<text class=\"empty\" x=\"\(SVG.number(area.left + area.width / 2))\" y=\"\(SVG.number(area.top + area.height / 2))\" text-anchor=\"middle\" font-size=\"13\" fill=\"\(Palette.muted)\">\(text.markupEscaped)</text>"
    }

    private func entryWidth(_ entry: LegendEntry) -> Double {
        24 + SVG.textWidth(entry.name, fontSize: Self.legendSize) + 14
    }

    private func legendFitsBesideTitle(_ legend: [LegendEntry]) -> Bool {
        let titleEnd = 8 + SVG.textWidth(title, fontSize: Self.titleSize) + 16
        return legend.isEmpty || titleEnd + legend.map(entryWidth).reduce(0, +) <= width - 8
    }

    /// Right-aligned on the title's row when it fits; otherwise left-aligned on a row of its own.
    private func legendMarkup(_ legend: [LegendEntry]) -> String {
        guard !legend.isEmpty else { return "" }
        let beside = legendFitsBesideTitle(legend)
        var x = beside ? width - 8 - legend.map(entryWidth).reduce(0, +) + 14 : 8
        let y = beside ? 20 : 20 + Self.rowHeight
        var svg = "<g class=\"legend\" font-size=\"\(SVG.number(Self.legendSize))\" fill=\"\(Palette.ink)\">"
        for entry in legend {
            svg +=
                "<line x1=\"\(SVG.number(x))\" y1=\"\(SVG.number(y - 4))\" x2=\"\(SVG.number(x + 18))\" y2=\"\(SVG.number(y - 4))\" \(entry.stroke.attributes) stroke-width=\"3\"/>"
            svg += "<text x=\"\(SVG.number(x + 24))\" y=\"\(SVG.number(y))\">\(entry.name.markupEscaped)</text>"
            x += entryWidth(entry)
        }
        return svg + "</g>"
    }
}
