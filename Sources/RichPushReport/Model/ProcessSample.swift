/// One process's memory and CPU use during one sampling interval.
package struct ProcessSample: Codable, Sendable, Equatable {
    /// Resident set size, MiB.
    package var rssMiB: Double
    /// CPU use over the interval; 100 is one core busy the whole time.
    package var cpuPercent: Double

    package init(rssMiB: Double, cpuPercent: Double) {
        self.rssMiB = rssMiB
        self.cpuPercent = cpuPercent
    }
}
