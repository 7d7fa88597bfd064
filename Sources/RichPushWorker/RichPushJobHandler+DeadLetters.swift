import RichPushCore
package import RichPushQueue
import RichPushStorage

/// The status never lies: a rich-push job that gave up for good leaves its devices failed, not
/// queued for ever.
extension RichPushJobHandler {
    /// Marks failed, with the job's reason, the pairs of each job's scope that have no outcome
    /// (a fan-out batch: those of its installations it would still push to; a whole
    /// notification: its ledger's pairs), reported to webhooks as `failed`, in one script call
    /// (see ``DeliveryLedger/recordDeadLettered(_:)``). `richpush dlq replay` takes them back.
    package func willDeadLetter(_ jobs: [(job: Job, reason: String)]) async throws {
        var reasons: [DeliveryScope: String] = [:]
        for (job, reason) in jobs {
            // A payload that cannot be read names no notification: nothing to mark.
            guard let delivery = RichPushJob.scope(of: job), delivery.app == app else { continue }
            reasons[delivery.scope] = reason
        }
        guard !reasons.isEmpty else { return }
        try await ledger.recordDeadLettered(try await addressable(reasons))
        logger.warning(
            "rich-push jobs given up: their devices marked failed",
            metadata: ["notification.ids": "\(Set(reasons.keys.map(\.notification)).sorted().map(String.init).joined(separator: ","))"])
    }

    /// The scopes with each batch narrowed to the installations its job would push to, as
    /// ``deliver(_:results:)`` chooses them: still registered and matching the notification's
    /// target. One that left meanwhile was never going to get the push, and a replay would not
    /// send it either: marked failed, then queued by the replay, it would say queued for ever.
    private func addressable(_ reasons: [DeliveryScope: String]) async throws -> [DeliveryScope: String] {
        let batches = reasons.keys.filter { $0.installations != nil }
        guard !batches.isEmpty else { return reasons }
        let records = try await ledger.notifications(ids: Array(Set(batches.map(\.notification))))
        var targets: [Int: TagExpression] = [:]
        for record in records { targets[record.id] = try? TagExpression(parsing: record.target) }
        let ids = Array(Set(batches.flatMap { $0.installations ?? [] }))
        let tags = Dictionary(
            try await installations.installations(ids: ids).map { ($0.id, Set($0.tags)) }, uniquingKeysWith: { first, _ in first })
        var narrowed: [DeliveryScope: String] = [:]
        for (scope, reason) in reasons {
            // A target that cannot be read (the job failed on it) keeps the batch as it was given.
            guard let installations = scope.installations, let target = targets[scope.notification] else {
                narrowed[scope] = reason
                continue
            }
            let kept = installations.filter { tags[$0].map(target.matches) ?? false }
            narrowed[DeliveryScope(notification: scope.notification, installations: kept)] = reason
        }
        return narrowed
    }
}
