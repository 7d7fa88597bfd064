/// The fleet's rules per device, kept where every worker sees them: a device a provider asked to
/// be left alone for a while (a 429 naming a device token or a Web Push subscription), and the
/// device a worker's round of requests is talking to right now. A round claims its devices right
/// before sending: a held device waits for its hold, and a device another round has claimed waits
/// for that round's answer, so at most one request to a device is in flight in the whole fleet and
/// the answer that asks to wait is known before the next request is written. The round releases
/// its claims and writes the holds its answers asked for at once, so a claim that succeeds sees
/// every hold written before it. Devices are named as the dead tokens are,
/// `<platform>:<handle>`; times are UNIX milliseconds.
package protocol DeviceBackOffs: Sendable {
    /// Claims for `owner`, until `until` at the latest (a round that crashed frees its devices
    /// then), those of `devices` that are neither held nor claimed by another owner at `now`;
    /// returns the others, each with why.
    func claim(_ devices: [String], owner: String, now: Int64, until: Int64) async throws -> [String: DeviceClaimRefusal]
    /// Releases `owner`'s claims of `devices` and holds each device of `holding` until its time
    /// (a later end wins over an earlier one), in one step; ends before `now` are forgotten.
    func release(_ devices: [String], owner: String, holding: [String: Int64], now: Int64) async throws
}
