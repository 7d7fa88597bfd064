/// The headline figures of a whole run.
public struct Summary: Codable, Sendable, Equatable {
    /// Wall-clock duration of the run.
    public var seconds: Double
    /// Pushes the devices should see: notifications × devices reached by each.
    public var pushesExpected: Int
    /// Distinct pushes that reached a device.
    public var delivered: Int
    /// Distinct local notifications shown (rich mode, after the background fetch).
    public var notified: Int
    /// `delivered` over `seconds`.
    public var deliveredPerSecond: Double
    /// `notified` over `seconds`.
    public var notifiedPerSecond: Double
    /// Expected pushes that never arrived.
    public var lost: Int
    /// Pushes that arrived more than once (each extra arrival counts once).
    public var duplicated: Int
    /// Deliveries the simulator reported as failed (for instance a failed background fetch).
    public var failed: Int
    /// Enqueue → device latency over the whole run; nil when nothing was delivered.
    public var enqueueToDeviceMs: Percentiles?
    /// Enqueue → local notification latency (rich mode); nil when nothing was shown.
    public var enqueueToNotificationMs: Percentiles?

    public init(seconds: Double, pushesExpected: Int, delivered: Int, notified: Int, deliveredPerSecond: Double, notifiedPerSecond: Double,
                lost: Int, duplicated: Int, failed: Int, enqueueToDeviceMs: Percentiles?, enqueueToNotificationMs: Percentiles?) {
        self.seconds = seconds
        self.pushesExpected = pushesExpected
        self.delivered = delivered
        self.notified = notified
        self.deliveredPerSecond = deliveredPerSecond
        self.notifiedPerSecond = notifiedPerSecond
        self.lost = lost
        self.duplicated = duplicated
        self.failed = failed
        self.enqueueToDeviceMs = enqueueToDeviceMs
        self.enqueueToNotificationMs = enqueueToNotificationMs
    }
}
