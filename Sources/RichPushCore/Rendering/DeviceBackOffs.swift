/// Devices a provider asked to be left alone for a while (a 429 naming a device token or a Web
/// Push subscription), shared by the fleet: every worker checks a batch's devices against it
/// right before sending, so a push of another notification to that device waits too, whichever
/// worker has it. Devices are named as the dead tokens are, `<platform>:<handle>`; times are
/// UNIX milliseconds.
package protocol DeviceBackOffs: Sendable {
    /// Of `devices`, those held at `now`, with when their hold ends.
    func held(among devices: [String], now: Int64) async throws -> [String: Int64]
    /// Holds each device until its time (a later end wins over an earlier one); ends before
    /// `now` are forgotten.
    func hold(_ until: [String: Int64], now: Int64) async throws
}
