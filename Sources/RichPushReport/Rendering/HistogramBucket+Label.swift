extension HistogramBucket {
    /// For each bucket, the short label under its bar (`≤2 ms`, `≤8.1 s`, `> 65 s`) and the
    /// range it counts, for its tooltip (`1–2 ms`). A bucket's lower bound is the previous
    /// bucket's upper one, 0 for the first.
    static func labels(_ buckets: [HistogramBucket]) -> [(label: String, detail: String)] {
        buckets.indices.map { index in
            let lower = index > 0 ? buckets[index - 1].upperMs : 0
            guard let upper = buckets[index].upperMs else {
                guard let lower else { return ("overflow", "overflow") }
                return ("> " + short(lower), "over " + NumberFormat.decimal(lower, maxPlaces: 2) + " ms")
            }
            let from = lower.map { NumberFormat.decimal($0, maxPlaces: 2) + "–" } ?? "≤"
            return ("≤" + short(upper), from + NumberFormat.decimal(upper, maxPlaces: 2) + " ms")
        }
    }

    /// Milliseconds below a second, else seconds cut (not rounded) to two significant digits,
    /// so a label never claims a bound higher than the real one: 65,536 ms is `65 s`.
    private static func short(_ ms: Double) -> String {
        guard ms >= 1000 else { return NumberFormat.compact(ms, maxPlaces: 2) + " ms" }
        let seconds = ms / 1000
        let cut = seconds < 10 ? (seconds * 10).rounded(.down) / 10 : seconds.rounded(.down)
        return NumberFormat.compact(cut, maxPlaces: 1) + " s"
    }
}
