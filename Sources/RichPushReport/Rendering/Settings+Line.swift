extension Settings {
    /// The set-up in one line: `silent mode · via api · audience one · shape max · 2,000,000
    /// notifications · 1,000 devices · 4 workers · rate unlimited`.
    var line: String {
        [
            "\(mode) mode",
            via.map { "via \($0)" },
            "audience \(audience)",
            "shape \(shape)",
            "\(NumberFormat.count(notifications)) notifications",
            "\(NumberFormat.count(devices)) devices",
            "\(NumberFormat.count(workers)) workers",
            rate > 0 ? "rate \(NumberFormat.count(rate))/s" : "rate unlimited",
        ].compactMap { $0 }.joined(separator: " · ")
    }

    /// Whether local notifications (the background fetch) were measured.
    var isRich: Bool { mode == "rich" }
}
