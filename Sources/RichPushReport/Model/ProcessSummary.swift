/// The peak memory and total CPU time of one process over the whole run.
package struct ProcessSummary: Codable, Sendable, Equatable {
    /// The name used in `Sample.processes` (`api`, `worker-1`, `redis`, ...).
    package var name: String
    /// Its process id.
    package var pid: Int32
    /// Highest resident set size seen, MiB.
    package var peakRSSMiB: Double
    /// CPU time used during the run (user + system), seconds.
    package var cpuSeconds: Double

    package init(name: String, pid: Int32, peakRSSMiB: Double, cpuSeconds: Double) {
        self.name = name
        self.pid = pid
        self.peakRSSMiB = peakRSSMiB
        self.cpuSeconds = cpuSeconds
    }
}
