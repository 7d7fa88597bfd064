/// Pauses on a provider that the whole fleet honours: when FCM answers `QUOTA_EXCEEDED` for the
/// project, or a platform asks with `Retry-After` on a 429 to wait, every worker pauses its sends to
/// that provider until the time said, not only the worker that was told. A scope names what is
/// paused (`fcm:<project>`, `apns:<host>:<team>`). Times are UNIX milliseconds, so hosts agree.
package protocol ProviderPauses: Sendable {
    /// When the pause on `scope` ends, or nil if there is none in force.
    func pauseEnd(_ scope: String) async throws -> Int64?
    /// Pauses `scope` until `end`; a pause that ends later already stays as it is.
    func pause(_ scope: String, until end: Int64) async throws
}

/// Device tokens a provider declared dead (APNs 410 `Unregistered`, FCM `UNREGISTERED`), so that no
/// worker sends to them again once the answer is in, even a job that resolved the device before
/// its installation was removed. A token comes back to life when its device registers again:
/// a mark counts only against registrations older than it.
package protocol GoneTokens: Sendable {
    /// Of `handles`, those marked dead, with when (UNIX milliseconds).
    func gone(among handles: [String]) async throws -> [String: Int64]
    /// Marks `handles` dead at `time` (UNIX milliseconds).
    func markGone(_ handles: [String], at time: Int64) async throws
}
