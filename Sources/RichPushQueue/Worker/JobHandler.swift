/// Runs jobs of one or more types. Throw ``JobError`` to say whether a failure is worth a retry;
/// any other error counts as retryable.
package protocol JobHandler: Sendable {
    func handle(_ job: Job) async throws
    /// Called once when the worker stops, after the last job (flush buffers here).
    func shutdown() async
    /// Called just before the worker dead-letters jobs of this handler's types (attempts
    /// exhausted, a permanent error, a poison message), with each job's reason, once per read:
    /// the place to record, where users look, that they failed for good. The dead letters are
    /// written only after it returns; when it throws a transient Redis error the jobs stay
    /// pending, are reclaimed and run again, and it is called again: it must be idempotent.
    /// Undoing it when the dead letters are replayed is up to whoever replays them.
    func willDeadLetter(_ jobs: [(job: Job, reason: String)]) async throws
    /// The pushes (or other units of work) `job`'s run just got accepted, forgotten once told:
    /// the worker asks once per run and adds them to the job's app's total (`s:`) when it
    /// acknowledges the job or sends it back to retry, in the script it runs anyway.
    func takeAccepted(_ job: Job) -> Int
}

extension JobHandler {
    package func shutdown() async {}
    package func takeAccepted(_ job: Job) -> Int { 0 }
    package func willDeadLetter(_ jobs: [(job: Job, reason: String)]) async throws {}
}

/// A handler that runs many jobs at once: the worker hands it all the jobs of one type from one
/// read of the stream, so it can load, claim and record them in a few pipelined round trips
/// rather than a few per job.
package protocol BatchJobHandler: JobHandler {
    /// Runs the jobs and returns one result per job, in order: success, a ``JobError``, or any
    /// other error (retried).
    func handle(batch jobs: [Job]) async -> [Result<Void, any Error>]
}

extension BatchJobHandler {
    package func handle(_ job: Job) async throws {
        try await handle(batch: [job])[0].get()
    }
}

/// How a handler classifies a failure.
package struct JobError: Error, Sendable, CustomStringConvertible {
    package enum Disposition: Sendable, Hashable {
        /// Run again later, after `after` or the retry policy's back-off.
        case retry(after: Duration?)
        /// Never retry (invalid token, payload too large): straight to the dead letters.
        case permanent
        /// Never retry and do not keep it either: acknowledged and counted as failed.
        case drop
        /// Not a failure (a throttle, another worker's lease): run again after `after`, without
        /// spending one of the job's attempts.
        case deferred(after: Duration)
    }

    package let disposition: Disposition
    package let message: String
    /// The platforms (`apns`, `fcm`, …) whose pushes failed, kept with the job when it is retried
    /// or dead-lettered (its field `fp`), so an operator can find a platform's failures.
    package var platforms: [String] = []
    /// For `.retry`: the attempts this failure counts as spent, when the handler counts them
    /// itself (per push rather than per job: the fewest any push still owed by the job has spent).
    /// The job is dead-lettered when this reaches the retry limit and is kept with the job as its
    /// attempt. nil: the job's own count, one more than before.
    package var attempts: Int?

    /// The same error, naming the platforms whose pushes failed.
    package func on(platforms: some Sequence<String>) -> JobError {
        var error = self
        error.platforms = Array(Set(platforms)).sorted()
        return error
    }

    package static func retry(_ message: String, after delay: Duration? = nil, attempts: Int? = nil) -> JobError {
        JobError(disposition: .retry(after: delay), message: message, attempts: attempts)
    }

    package static func permanent(_ message: String) -> JobError {
        JobError(disposition: .permanent, message: message)
    }

    /// The job cannot run yet and is not at fault: again after `delay`, its attempts untouched.
    package static func deferred(_ message: String, after delay: Duration) -> JobError {
        JobError(disposition: .deferred(after: delay), message: message)
    }

    package static func drop(_ message: String) -> JobError {
        JobError(disposition: .drop, message: message)
    }

    package var description: String { message }
}

/// The handlers a worker runs, by job type.
package struct JobHandlers: Sendable {
    private var handlers: [String: any JobHandler] = [:]

    package init() {}

    package mutating func register(_ handler: any JobHandler, for type: String) {
        handlers[type] = handler
    }

    package subscript(type: String) -> (any JobHandler)? { handlers[type] }

    package var types: [String] { handlers.keys.sorted() }

    var all: [any JobHandler] { Array(handlers.values) }
}
