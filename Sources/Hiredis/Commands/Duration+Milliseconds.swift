extension Duration {
    /// Whole milliseconds, rounded down: what Redis takes for `PX`, `BLOCK`, `PEXPIRE` and scripts.
    package var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

extension Duration {
    /// The whole nanoseconds of the duration.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
