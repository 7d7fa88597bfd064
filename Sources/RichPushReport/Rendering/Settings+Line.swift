extension Settings {
    /// The set-up in one line: `silent mode · audience one · shape max · 2,000,000
    /// notifications · 1,000 devices · 4 workers · rate unlimited`.
    var line: String {
        [
            "\(mode) mode",
            "audience \(audience)",
            "shape \(shape)",
            "\(NumberFormat.count(notifications)) notifications",
            "\(NumberFormat.count(devices)) devices",
            "\(NumberFormat.count(workers)) workers",
            rate > 0 ? "rate \(NumberFormat.count(rate))/s" : "rate unlimited",
        ].joined(separator: " · ")
    }

    /// Whether local notifications (the background fetch) were measured.
    var isRich: Bool { mode == "rich" }
}
