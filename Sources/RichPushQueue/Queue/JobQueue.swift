import Foundation
package import Hiredis

/// The reliable job queue on one Redis Stream with one consumer group.
///
/// At-least-once: a job leaves the pending-entries list (PEL) only when a worker acknowledges it,
/// retries it (atomically moved to the delayed set) or dead-letters it (atomically copied to the
/// dead-letter stream). A worker that dies leaves its jobs in the PEL, where the others reclaim
/// them after the visibility timeout. The PEL *is* the visibility timeout; nothing polls.
package struct JobQueue: Sendable {
    package let configuration: JobQueueConfiguration
    /// Shared, multiplexed client for everything but the blocking read.
    package let redis: any RedisClient

    package init(redis: any RedisClient, configuration: JobQueueConfiguration = JobQueueConfiguration()) {
        self.redis = redis
        self.configuration = configuration
    }

    /// Creates the stream and the consumer group if they do not exist yet (idempotent).
    package func ensureGroup() async throws {
        do {
            try await redis.send("XGROUP", "CREATE", configuration.streamKey, configuration.group, "0", "MKSTREAM")
        } catch let error as RedisError where error.serverErrorPrefix == "BUSYGROUP" {
            // Already there: another worker or producer created it.
        }
    }

    /// Enqueues one job and returns its stream id. With an idempotency key, a second enqueue of
    /// the same key within the TTL returns the first job's id and adds nothing.
    @discardableResult
    package func enqueue(_ request: JobRequest) async throws -> String {
        try await enqueue([request])[0]
    }

    /// Enqueues jobs in one pipelined round trip; ids in the order of the requests (in fair
    /// scheduling a ticket `w-<n>`: a job gets its stream id when a worker takes it).
    @discardableResult
    package func enqueue(_ requests: [JobRequest]) async throws -> [String] {
        let now = Self.nowMilliseconds()
        let admission = QueueScripts.Admission(configuration)
        let commands = requests.map { request in
            if let key = request.idempotencyKey {
                return QueueScripts.enqueueOnce.command(
                    QueueScripts.EnqueueCall(
                        admission: admission, key: configuration.idempotencyKey(key),
                        time: Int64(configuration.idempotencyTTL.milliseconds),
                        fields: Job.fields(for: request, now: now)))
            }
            if configuration.scheduling == .fifo { return enqueueCommand(for: request, now: now) }
            return QueueScripts.enqueue.command(
                QueueScripts.EnqueueCall(admission: admission, key: "", time: 0, fields: Job.fields(for: request, now: now)))
        }
        let replies = try await redis.pipeline(commands, loading: [QueueScripts.enqueueOnce.script, QueueScripts.enqueue.script])
        return try replies.map { reply in
            let reply = try reply.throwingError()
            if let id = reply.string { return id }
            if let id = reply.array?.first?.string { return id }
            throw RedisError(code: .unexpectedReply, message: "enqueue answered \(reply)")
        }
    }

    /// The XADD that enqueues `request` into the stream in arrival order, whatever the scheduling
    /// (no idempotency key: use ``enqueue(_:)``).
    package func enqueueCommand(for request: JobRequest, now: Int64 = JobQueue.nowMilliseconds()) -> RedisCommand {
        var command = RedisCommand("XADD", configuration.streamKey, "*")
        Job.appendFields(of: request, now: now, to: &command)
        return command
    }

    /// Where a script that admits a job together with other writes sends it, and the job's
    /// field/value pairs: the script calls ``JobAdmission/luaFunction``'s `admit` with them.
    package func admission(for request: JobRequest, now: Int64 = JobQueue.nowMilliseconds()) -> JobAdmission {
        JobAdmission(admission: QueueScripts.Admission(configuration), fields: Job.fields(for: request, now: now))
    }

    package func enqueue(_ requests: [JobRequest], at times: [Int64]) async throws {
        let now = Self.nowMilliseconds()
        let admission = QueueScripts.Admission(configuration)
        let commands = zip(requests, times).map { request, time in
            QueueScripts.schedule.command(
                QueueScripts.EnqueueCall(
                    admission: admission, key: configuration.delayedKey, time: time,
                    fields: Job.fields(for: request, now: now)))
        }
        for reply in try await redis.pipeline(commands, loading: [QueueScripts.schedule.script]) { _ = try reply.throwingError() }
    }

    package static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}

/// Where jobs can be enqueued: the queue in Redis (``JobQueue``), or an in-memory one in unit
/// tests of a handler that enqueues follow-up jobs.
package protocol JobEnqueuing: Sendable {
    /// Enqueues the jobs; their ids in the order of the requests.
    @discardableResult
    func enqueue(_ requests: [JobRequest]) async throws -> [String]
    /// Enqueues each job to run at its time (ms since 1970), in one pipelined round trip: it waits
    /// in the delayed set, as a retry does, until the workers' maintenance moves it to the stream.
    func enqueue(_ requests: [JobRequest], at times: [Int64]) async throws
}

extension JobQueue: JobEnqueuing {}

/// A job for a script of another module to admit with its own writes (the create script): the
/// keys and arguments ``JobAdmission/slots(_:)`` declares, the fields, and the Lua function
/// `admit(fair, stream, ready, sched, bell, waitPrefix, fields)` that the script calls.
package struct JobAdmission: Sendable {
    let admission: QueueScripts.Admission
    package let fields: [any RedisArgument]

    /// The Lua `admit` function, for a script's fragments.
    package static var luaFunction: String { QueueScripts.admitFunction }

    /// The slots `stream`, `ready`, `sched`, `bell` (keys), `fair`, `waitPrefix` (arguments).
    package static func slots<Call>(_ admission: @escaping @Sendable (Call) -> JobAdmission) -> [LuaSlot<Call>] {
        QueueScripts.admissionSlots { admission($0).admission }
    }
}
