/// What one sampling interval (normally 1 s) of the run looked like.
public struct Sample: Codable, Sendable, Equatable {
    /// Seconds since the start, at the end of the interval.
    public var t: Double
    /// Notifications created so far (cumulative).
    public var sent: Int
    /// Pushes delivered to devices so far (cumulative).
    public var delivered: Int
    /// Local notifications shown so far (cumulative).
    public var notified: Int
    /// Notifications created per second during the interval.
    public var sentPerSecond: Double
    /// Pushes delivered per second during the interval.
    public var deliveredPerSecond: Double
    /// Enqueue → device latency of the pushes delivered in this interval; nil when none were.
    public var latencyMs: Percentiles?
    /// Jobs not yet read by any worker.
    public var queueLag: Int
    /// Jobs read by a worker but not yet acknowledged.
    public var queuePending: Int
    /// Memory and CPU of each process, by process name.
    public var processes: [String: ProcessSample]

    public init(t: Double, sent: Int, delivered: Int, notified: Int, sentPerSecond: Double, deliveredPerSecond: Double,
                latencyMs: Percentiles?, queueLag: Int, queuePending: Int, processes: [String: ProcessSample]) {
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
