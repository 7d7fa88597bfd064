import Hiredis
package import RichPushCore
import RichPushQueue

/// Many cancels at once (the console's "cancel all that match", up to 10,000): the cancel script
/// once per notification, as ``cancel(id:)`` runs it, in pipelines of ``cancelsPerPipeline``
/// calls grouped by partition, so a batch's calls share the partition's hash tag (one slot, one
/// node of a cluster) and 10,000 cancels cost about 20 round trips instead of 10,000.
extension RedisNotificationStore {
    /// Most cancel script calls in one pipeline (each ~10 µs of Redis time: a batch holds Redis'
    /// connection about 5 ms, and never in one script).
    static let cancelsPerPipeline = 500

    package func cancel(ids: [Int], progress: (Int) async -> Void) async throws -> [Result<CancelOutcome, any Error>] {
        guard !ids.isEmpty else { return [] }
        var outcomes = [Result<CancelOutcome, any Error>?](repeating: nil, count: ids.count)
        let now = JobQueue.nowMilliseconds()
        let byPartition = Dictionary(grouping: ids.indices) { keys.partitionIndex(ofNotification: ids[$0]) }
        for partition in byPartition.keys.sorted() {
            let positions = byPartition[partition]!
            for start in stride(from: 0, to: positions.count, by: Self.cancelsPerPipeline) {
                let batch = positions[start..<min(start + Self.cancelsPerPipeline, positions.count)]
                let replies = try await redis.run(Self.cancelScript, calls: batch.map { cancelCall(id: ids[$0], now: now) })
                guard replies.count == batch.count else {
                    throw RedisError(code: .unexpectedReply, message: "\(replies.count) replies to \(batch.count) cancels")
                }
                var cancelled = 0
                for (position, reply) in zip(batch, replies) {
                    let outcome = Result { try Self.cancelOutcome(try reply.throwingError()) }
                    outcomes[position] = outcome
                    if case .success(let state) = outcome, state.isCancelled { cancelled += 1 }
                }
                await progress(cancelled)
            }
        }
        return outcomes.map { $0! }
    }

    /// The cancel script's keys and arguments for notification `id`.
    func cancelCall(id: Int, now: Int64) -> CancelCall {
        let keys = self.keys.forNotification(id)
        return CancelCall(
            status: keys.notification(id), record: keys.notification(id), webhookWants: keys.webhookWants,
            webhookOutbox: keys.webhookOutbox, id: id, now: now)
    }

    /// What the cancel script's reply says.
    static func cancelOutcome(_ reply: RedisValue) throws -> CancelOutcome {
        switch reply.string {
        case nil:
            guard reply.isNull else { throw RedisError.unexpected(reply, expected: "a cancel's state or nil") }
            return .notFound
        case DeliveryState.cancelled.rawValue: return .alreadyCancelled
        case "ok": return .cancelled
        case let state?: return .tooLate(DeliveryState(rawValue: state) ?? .sent)
        }
    }
}
