/// One process's memory and CPU use during one sampling interval.
public struct ProcessSample: Codable, Sendable, Equatable {
    /// Resident set size, MiB.
    public var rssMiB: Double
    /// CPU use over the interval; 100 is one core busy the whole time.
    public var cpuPercent: Double

    public init(rssMiB: Double, cpuPercent: Double) {
        self.rssMiB = rssMiB
        self.cpuPercent = cpuPercent
    }
}
