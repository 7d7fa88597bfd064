/// The rectangle, inside a chart, where data is drawn; maps data values to SVG coordinates.
struct PlotArea: Sendable, Equatable {
    var left: Double
    var top: Double
    var width: Double
    var height: Double

    var right: Double { left + width }
    var bottom: Double { top + height }

    func x(_ value: Double, on scale: NiceScale) -> Double { left + scale.fraction(value) * width }
    func y(_ value: Double, on scale: NiceScale) -> Double { bottom - scale.fraction(value) * height }

    /// Horizontal grid lines with their labels on the left, the axis name rotated beside them.
    func yAxis(_ scale: NiceScale, label: String) -> String {
        var svg = "<g class=\"y-axis\" font-size=\"11\" fill=\"\(Palette.muted)\">"
        for tick in scale.ticks {
            let y = SVG.number(self.y(tick, on: scale))
            svg += "<line x1=\"\(SVG.number(left))\" y1=\"\(y)\" x2=\"\(SVG.number(right))\" y2=\"\(y)\" stroke=\"\(Palette.grid)\"/>"
            svg += "<text x=\"\(SVG.number(left - 6))\" y=\"\(y)\" dy=\"0.32em\" text-anchor=\"end\">\(scale.label(tick))</text>"
        }
        let middle = SVG.number(top + height / 2)
        svg += "<text x=\"12\" y=\"\(middle)\" text-anchor=\"middle\" transform=\"rotate(-90 12 \(middle))\">\(label.markupEscaped)</text>"
        return svg + "</g>"
    }

    /// The baseline with ticks and labels below it, the axis name under them.
    func xAxis(_ scale: NiceScale, label: String) -> String {
        var svg = "<g class=\"x-axis\" font-size=\"11\" fill=\"\(Palette.muted)\">"
        svg +=
            "<line x1=\"\(SVG.number(left))\" y1=\"\(SVG.number(bottom))\" x2=\"\(SVG.number(right))\" y2=\"\(SVG.number(bottom))\" stroke=\"\(Palette.axis)\"/>"
        for tick in scale.ticks {
            let x = SVG.number(self.x(tick, on: scale))
            svg +=
                "<line x1=\"\(x)\" y1=\"\(SVG.number(bottom))\" x2=\"\(x)\" y2=\"\(SVG.number(bottom + 4))\" stroke=\"\(Palette.axis)\"/>"
            svg += "<text x=\"\(x)\" y=\"\(SVG.number(bottom + 16))\" text-anchor=\"middle\">\(scale.label(tick))</text>"
        }
        svg +=
            "<text x=\"\(SVG.number(left + width / 2))\" y=\"\(SVG.number(bottom + 32))\" text-anchor=\"middle\">\(label.markupEscaped)</text>"
        return svg + "</g>"
    }
}
