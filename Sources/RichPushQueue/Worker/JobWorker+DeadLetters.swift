import Hiredis
import Logging

/// Dead-lettering jobs that failed for good: attempts exhausted, a permanent error, a poison
/// message found by the reclaim.
extension JobWorker {
    /// Dead-letters `jobs` (all of one handler, nil for jobs nobody here runs): first the
    /// handler's ``JobHandler/willDeadLetter(_:)``, once for all of them, then each job's
    /// dead-letter write.
    ///
    /// That order, not the other: when either step fails while Redis is away, the jobs stay
    /// pending, are reclaimed and run again, and both steps come again (the hook is idempotent);
    /// dead-lettering first would leave, on a failure of the hook, a dead job whose notification
    /// says "queued" forever. A hook that fails otherwise (a bug) is logged and the jobs are
    /// dead-lettered all the same: nothing may keep a job alive for ever.
    func deadLetter(_ jobs: [(job: Job, reason: String, platforms: [String])], handler: (any JobHandler)?) async {
        guard !jobs.isEmpty else { return }
        if let handler {
            do {
                let reasons = jobs.map { (job: $0.job, reason: $0.reason) }
                try await retryingTransient { try await handler.willDeadLetter(reasons) }
            } catch let error as RedisError where error.isTransient {
                logger.error(
                    "could not record the failure of jobs about to be dead-lettered; they stay pending and will be reclaimed",
                    metadata: ["job.ids": "\(jobs.map(\.job.id).joined(separator: ","))", "error": "\(error)"])
                return
            } catch {
                logger.error(
                    "recording the failure of jobs about to be dead-lettered failed; dead-lettering them all the same",
                    metadata: ["job.ids": "\(jobs.map(\.job.id).joined(separator: ","))", "error": "\(error)"])
            }
        }
        for (job, reason, platforms) in jobs {
            await settle(job.id, type: job.type, outcome: .deadLettered) {
                try await self.queue.deadLetter(id: job.id, error: reason, platforms: platforms)
            }
        }
    }

    /// Dead-letters the poison messages the reclaim claimed, by handler, as jobs that failed for
    /// good; their leases are kept while it runs.
    func deadLetterPoison(_ poison: [(delivery: JobQueue.Delivery, reason: String)]) async {
        var byType: [String: [(job: Job, reason: String, platforms: [String])]] = [:]
        for (delivery, reason) in poison {
            switch delivery {
            case .success(let job):
                logger.warning(
                    "dead-lettering a poison message", metadata: ["job.id": "\(job.id)", "job.type": "\(job.type)", "error": "\(reason)"])
                byType[job.type, default: []].append((job, reason, []))
            case .failure(let error):
                guard let id = error.id else { continue }
                logger.warning("dead-lettering a poison message", metadata: ["job.id": "\(id)", "error": "\(reason)"])
                await settle(id, type: "undecodable", outcome: .deadLettered) { try await self.queue.deadLetter(id: id, error: reason) }
            }
        }
        for (type, jobs) in byType {
            let started = ContinuousClock.now
            running.withLock { for (job, _, _) in jobs { $0[job.id] = started } }
            await deadLetter(jobs, handler: handlers[type])
            running.withLock { for (job, _, _) in jobs { _ = $0.removeValue(forKey: job.id) } }
        }
    }
}
