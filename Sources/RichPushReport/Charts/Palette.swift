/// Series colours from the Okabe–Ito palette, which stays distinguishable with the common forms
/// of colour blindness; yellow is left out, too pale on white. Past the seventh series the
/// colours repeat with a dash pattern, so each series still looks different.
enum Palette {
    static let colors = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]
    private static let dashes = ["6 3", "2 2", "8 3 2 3"]

    /// Text, axes and grid.
    static let ink = "#222222"
    static let muted = "#666666"
    static let axis = "#999999"
    static let grid = "#E6E6E6"
    /// Lost and duplicated pushes; the same red as the HTML page's `bad` class.
    static let bad = "#B3261E"

    /// The stroke of series number `index`.
    static func stroke(_ index: Int) -> Stroke {
        let round = index / colors.count
        return Stroke(color: colors[index % colors.count], dash: round == 0 ? nil : dashes[(round - 1) % dashes.count])
    }

    /// A series' colour and, from the second round of colours on, its dash pattern.
    struct Stroke: Sendable, Equatable {
        var color: String
        var dash: String?

        /// `stroke="…"` and, if dashed, `stroke-dasharray="…"`.
        var attributes: String {
            "stroke=\"\(color)\"" + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")
        }
    }
}
