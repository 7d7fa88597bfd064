/// The headline figures of a whole run.
package struct Summary: Codable, Sendable, Equatable {
    /// Wall-clock duration of the run.
    package var seconds: Double
    /// Pushes the devices should see: notifications × devices reached by each.
    package var pushesExpected: Int
    /// Distinct pushes that reached a device.
    package var delivered: Int
    /// Distinct local notifications shown (rich mode, after the background fetch).
    package var notified: Int
    /// `delivered` over `seconds`.
    package var deliveredPerSecond: Double
    /// `notified` over `seconds`.
    package var notifiedPerSecond: Double
    /// Expected pushes that never arrived.
    package var lost: Int
    /// Pushes that arrived more than once (each extra arrival counts once).
    package var duplicated: Int
    /// Deliveries the simulator reported as failed (for instance a failed background fetch).
    package var failed: Int
    /// Enqueue → device latency over the whole run; nil when nothing was delivered.
    package var enqueueToDeviceMs: Percentiles?
    /// Enqueue → local notification latency (rich mode); nil when nothing was shown.
    package var enqueueToNotificationMs: Percentiles?

    package init(
        seconds: Double, pushesExpected: Int, delivered: Int, notified: Int, deliveredPerSecond: Double, notifiedPerSecond: Double,
        lost: Int, duplicated: Int, failed: Int, enqueueToDeviceMs: Percentiles?, enqueueToNotificationMs: Percentiles?
    ) {
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
