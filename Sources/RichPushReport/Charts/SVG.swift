/// Small helpers shared by the charts for writing SVG text.
enum SVG {
    static let namespace = "http://www.w3.org/2000/svg"
    /// Fonts every system has; no web fonts, so the page and picture open offline.
    static let fontFamily = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"

    /// A coordinate, to a tenth of a pixel: `56`, `240.5`.
    static func number(_ value: Double) -> String { NumberFormat.compact(value, maxPlaces: 1) }

    /// The `data-values` attribute text: `100,200,300`, up to 3 decimals, no grouping.
    static func values(_ values: [Double]) -> String {
        values.map { NumberFormat.compact($0) }.joined(separator: ",")
    }

    /// An estimate of how wide `text` is drawn at `fontSize` in a sans-serif font. There is no
    /// text measuring here, so layouts leave room rather than rely on it.
    static func textWidth(_ text: String, fontSize: Double) -> Double {
        Double(text.count) * fontSize * 0.6
    }

    /// `text` cut to about `width` at `fontSize`, with `…` where it was cut.
    static func truncated(_ text: String, toWidth width: Double, fontSize: Double) -> String {
        let fits = Int(width / (fontSize * 0.6))
        guard text.count > fits else { return text }
        return String(text.prefix(max(1, fits - 1))) + "…"
    }
}
