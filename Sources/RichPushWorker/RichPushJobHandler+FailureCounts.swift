import Logging
import RichPushCore

extension RichPushJobHandler {
    /// Adds a batch's failed pushes (reason code → pushes) to its app's totals in the partition:
    /// one script call, none for a batch without failures (a successful batch costs Redis nothing
    /// more).
    ///
    /// These are statistics, not state: a write that fails does not fail the batch. Its pushes are
    /// sent and their outcomes recorded; a retry would spend an attempt of every job and resend
    /// nothing, only to count again. The loss is logged and counted in
    /// `richpush_failure_counts_lost_total` (pushes), so a console that shows too few failures
    /// can be told from one that shows all.
    func countFailures(_ counts: [String: Int]) async {
        guard let failedPushes, !counts.isEmpty else { return }
        do {
            try await failedPushes.countFailedPushes(counts, app: app.rawValue)
        } catch {
            let pushes = counts.values.reduce(0, +)
            metrics.lostFailureCounts(pushes)
            logger.warning(
                "failed pushes not counted by reason",
                metadata: [
                    "app": "\(app)", "pushes": "\(pushes)", "error": "\(error)",
                ])
        }
    }
}
