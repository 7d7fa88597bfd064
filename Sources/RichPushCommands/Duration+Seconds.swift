extension Duration {
    /// The duration in seconds, with its fraction (what the commands print and compute rates with).
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in milliseconds, with its fraction.
    package var milliseconds: Double { seconds * 1000 }
}
