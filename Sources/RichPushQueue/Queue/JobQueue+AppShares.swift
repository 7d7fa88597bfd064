import Hiredis

/// An app's share under fair scheduling: its weight and its cap on jobs in flight, kept in each
/// partition's scheduler hash, where the take script reads them.
package struct AppShare: Sendable, Hashable, Codable {
    /// Its share relative to the other apps with work (1 by default).
    package var weight: Int
    /// Most of its jobs taken and not yet settled, per partition; nil: no cap.
    package var maxInFlight: Int?

    package init(weight: Int = 1, maxInFlight: Int? = nil) {
        self.weight = weight
        self.maxInFlight = maxInFlight
    }

    /// The bounds an operator may set.
    package static let weights = 1...1000
    package static let caps = 1...1_000_000

    /// Why an operator may not set these (a weight or cap out of bounds), or nil.
    package var problem: String? {
        if !Self.weights.contains(weight) { return Self.weightProblem }
        if let maxInFlight, !Self.caps.contains(maxInFlight) { return Self.capProblem }
        return nil
    }

    package static let weightProblem = "weight must be an integer from \(weights.lowerBound) to \(weights.upperBound)"
    package static let capProblem =
        "maxInFlight must be an integer from \(caps.lowerBound) to \(caps.upperBound), or none (null) for no cap"
}

extension JobQueue {
    /// Sets `app`'s weight and cap in every partition of `queues`, in one pipelined round trip
    /// (the default weight and no cap remove the fields: an idle app costs nothing).
    package static func setLimits(_ limits: AppShare, of app: String, in queues: [JobQueue]) async throws {
        try await setLimits([(app, limits)], in: queues)
    }

    /// As ``setLimits(_:of:in:)`` for many apps at once, in one pipelined round trip.
    package static func setLimits(_ apps: [(app: String, limits: AppShare)], in queues: [JobQueue]) async throws {
        guard let redis = queues.first?.redis, !apps.isEmpty else { return }
        var commands: [RedisCommand] = []
        for key in queues.map(\.configuration.schedulerKey) {
            for (app, limits) in apps {
                commands.append(
                    limits.weight == 1
                        ? RedisCommand("HDEL", key, SchedulerField.weight.of(app))
                        : RedisCommand("HSET", key, SchedulerField.weight.of(app), limits.weight))
                commands.append(
                    limits.maxInFlight.map { RedisCommand("HSET", key, SchedulerField.maxInFlight.of(app), $0) }
                        ?? RedisCommand("HDEL", key, SchedulerField.maxInFlight.of(app)))
            }
        }
        for reply in try await redis.pipeline(commands) { _ = try reply.throwingError() }
    }

    /// What a removed app leaves in every partition of `queues`: its weight and cap go, and a
    /// pause is lifted, so its leftover jobs are taken (and fail as their app's, visibly) rather
    /// than wait unseen, and an app made later under the same id starts unpaused at weight 1.
    /// Its pass and its count in flight stay: jobs of it may still be running.
    package static func forget(app: String, in queues: [JobQueue]) async throws {
        try await setLimits(AppShare(), of: app, in: queues)
        try await setPaused(false, app: app, in: queues)
    }
}
