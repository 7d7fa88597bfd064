/// What one sampling interval (normally 1 s) of the run looked like.
package struct Sample: Codable, Sendable, Equatable {
    /// Seconds since the start, at the end of the interval.
    package var t: Double
    /// Notifications created so far (cumulative).
    package var sent: Int
    /// Pushes delivered to devices so far (cumulative).
    package var delivered: Int
    /// Local notifications shown so far (cumulative).
    package var notified: Int
    /// Notifications created per second during the interval.
    package var sentPerSecond: Double
    /// Pushes delivered per second during the interval.
    package var deliveredPerSecond: Double
    /// Enqueue → device latency of the pushes delivered in this interval; nil when none were.
    package var latencyMs: Percentiles?
    /// Jobs not yet read by any worker.
    package var queueLag: Int
    /// Jobs read by a worker but not yet acknowledged.
    package var queuePending: Int
    /// Memory and CPU of each process, by process name.
    package var processes: [String: ProcessSample]

    package init(
        t: Double, sent: Int, delivered: Int, notified: Int, sentPerSecond: Double, deliveredPerSecond: Double,
        latencyMs: Percentiles?, queueLag: Int, queuePending: Int, processes: [String: ProcessSample]
    ) {
        self.t = t
        self.sent = sent
        self.delivered = delivered
        self.notified = notified
        self.sentPerSecond = sentPerSecond
        self.deliveredPerSecond = deliveredPerSecond
        self.latencyMs = latencyMs
        self.queueLag = queueLag
        self.queuePending = queuePending
        self.processes = processes
    }
}
