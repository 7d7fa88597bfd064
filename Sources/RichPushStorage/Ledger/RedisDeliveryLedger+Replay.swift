package import RichPushQueue

/// Replays dead letters and takes back what their dead-lettering marked: what `richpush dlq
/// replay` and the console's replay both run.
extension RedisDeliveryLedger {
    /// Moves the given dead letters of `queue` (all of them when `ids` is nil) back into the
    /// queue, in batches of 500 per script call, and marks the rich pushes' devices queued again.
    /// Replay first, then revive: if reviving fails, the replayed jobs take the marks back
    /// themselves as they lease their devices again, whereas the other order could leave a dead
    /// job whose devices say queued. Returns how many were moved; `progress` gets each batch's
    /// count once its devices are marked.
    package func replayDeadLetters(_ ids: [String]?, in queue: JobQueue, progress: (Int) async -> Void = { _ in }) async throws -> Int {
        try await queue.replayDeadLetters(
            ids: ids,
            replayed: { jobs in
                do {
                    try await reviveDeadLettered(jobs.compactMap(RichPushJob.scope(of:)))
                } catch {
                    throw ReviveError(replayed: jobs.count, underlying: error)
                }
            }, progress: progress)
    }

    /// Jobs were replayed but their devices could not be marked queued again (the jobs will as they run).
    package struct ReviveError: Error, CustomStringConvertible {
        package let replayed: Int
        package let underlying: any Error
        package var description: String {
            "replayed \(replayed) job(s), but could not mark their devices queued again (the jobs will as they run): \(underlying)"
        }
    }
}
