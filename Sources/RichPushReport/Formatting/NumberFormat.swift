/// Number formatting that never depends on the machine's locale: `.` for decimals, `,` between
/// thousands, on every machine that writes a report.
enum NumberFormat {
    /// Shown for NaN and infinities.
    static let missing = "–"

    /// A count with thousands separators: `2,000,000`.
    static func count(_ value: Int) -> String {
        (value < 0 ? "-" : "") + grouped(String(value.magnitude))
    }

    /// A rate with thousands separators, whole above 10 (`22,417`), one decimal below (`4.5`).
    static func rate(_ value: Double) -> String {
        fixed(value, places: abs(value) < 10 ? 1 : 0)
    }

    /// Milliseconds with one decimal: `7.3`, `1,024.0`.
    static func latency(_ ms: Double) -> String { fixed(ms, places: 1) }

    /// `value` rounded half away from zero to `places` decimals, thousands grouped.
    static func fixed(_ value: Double, places: Int) -> String {
        guard let (negative, whole, fraction) = digits(value, places: places) else { return value.isFinite ? value.description : missing }
        return (negative ? "-" : "") + grouped(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// Up to `maxPlaces` decimals, trailing zeros stripped, no grouping: `100`, `0.125`, `2.5`.
    /// The form of `data-values` and of SVG coordinates.
    static func compact(_ value: Double, maxPlaces: Int = 3) -> String {
        guard let (negative, whole, fraction) = digits(value, places: maxPlaces) else { return value.isFinite ? value.description : "0" }
        var trimmed = Substring(fraction)
        while trimmed.last == "0" { trimmed.removeLast() }
        return (negative ? "-" : "") + whole + (trimmed.isEmpty ? "" : "." + trimmed)
    }

    /// Like `compact`, with thousands grouped: `65,536`, `0.25`.
    static func decimal(_ value: Double, maxPlaces: Int) -> String {
        grouped(compact(value, maxPlaces: maxPlaces))
    }

    /// A fraction as a percentage with at most one decimal: `0.6` is `60%`, `1/3` is `33.3%`.
    static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return missing }
        return decimal(fraction * 100, maxPlaces: 1) + "%"
    }

    /// The sign, whole digits and exactly `places` fraction digits of `value`; nil if it is not
    /// finite or too large for exact integer arithmetic (no count or latency comes near).
    private static func digits(_ value: Double, places: Int) -> (negative: Bool, whole: String, fraction: String)? {
        guard value.isFinite else { return nil }
        var scale: Double = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value.magnitude * scale).rounded()
        guard scaled < 1e18 else { return nil }
        let units = UInt64(scaled), divisor = UInt64(scale)
        let fraction = String(units % divisor)
        let padded = places == 0 ? "" : String(repeating: "0", count: places - fraction.count) + fraction
        return (value < 0 && units > 0, String(units / divisor), padded)
    }

    /// `1234567` as `1,234,567`; anything after a `.` is left alone.
    private static func grouped(_ number: String) -> String {
        let whole = number.prefix { $0 != "." }
        guard whole.count > 3 else { return number }
        var result = ""
        for (offset, digit) in whole.enumerated() {
            if offset > 0, (whole.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return result + number.dropFirst(whole.count)
    }
}
