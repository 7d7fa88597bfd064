import Hiredis

/// Counts an app's failed pushes by reason code (the worker, once per batch that had a failure):
/// the queue in Redis (``JobQueue``), or whatever a test of the handler puts in its place.
package protocol FailedPushCounting: Sendable {
    /// Adds `counts` (reason code → pushes) to `app`'s totals in one round trip.
    func countFailedPushes(_ counts: [String: Int], app: String) async throws
}

extension JobQueue: FailedPushCounting {
    /// Most distinct codes one app's totals name in a partition; the rest count as `other`.
    package static let failureCodesPerApp = 32

    /// One script call on the partition's `fails:<app>` hash (``QueueScripts/countFailures``);
    /// nothing when `counts` holds no failure.
    package func countFailedPushes(_ counts: [String: Int], app: String) async throws {
        let counts = counts.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        guard !counts.isEmpty else { return }
        try await redis.run(
            QueueScripts.countFailures,
            QueueScripts.FailuresCall(
                failures: configuration.failuresKey(app: app), most: Self.failureCodesPerApp,
                counts: counts.flatMap { [$0.key, $0.value] as [any RedisArgument] }))
    }
}
