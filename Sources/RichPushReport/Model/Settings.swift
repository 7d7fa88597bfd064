/// How a load test was set up: what the reader needs to reproduce or compare it.
package struct Settings: Codable, Sendable, Equatable {
    /// `silent` (count pushes delivered) or `rich` (the whole flow with the background fetch).
    package var mode: String
    /// `one` (each notification to one device) or `all` (each to every device).
    package var audience: String
    /// How notifications were created over time: `max`, `constant`, `ramp` or `burst`.
    package var shape: String
    /// Notifications created.
    package var notifications: Int
    /// Simulated devices.
    package var devices: Int
    /// Worker processes.
    package var workers: Int
    /// Target notifications per second; 0 means as fast as possible.
    package var rate: Int
    /// When the run started, ISO 8601.
    package var startedAt: String
    /// The command line that ran it.
    package var command: String
    /// How notifications were created: `api` (POST /api/notifications) or `store` (straight
    /// into Redis). Absent in reports from before the choice existed (they used the store).
    package var via: String?

    package init(
        mode: String, audience: String, shape: String, notifications: Int, devices: Int, workers: Int, rate: Int, startedAt: String,
        command: String, via: String? = nil
    ) {
        self.mode = mode
        self.audience = audience
        self.shape = shape
        self.notifications = notifications
        self.devices = devices
        self.workers = workers
        self.rate = rate
        self.startedAt = startedAt
        self.command = command
        self.via = via
    }
}
