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

    /// Enqueues jobs in one pipelined round trip; ids in the order of the requests.
    @discardableResult
    package func enqueue(_ requests: [JobRequest]) async throws -> [String] {
        let now = Self.nowMilliseconds()
        let commands = requests.map { request in
            if let key = request.idempotencyKey {
                return QueueScripts.enqueueOnce.command(QueueScripts.EnqueueCall(stream: configuration.streamKey, key: configuration.idempotencyKey(key),
                                                                                 time: Int64(configuration.idempotencyTTL.milliseconds),
                                                                                 fields: Job.fields(for: request, now: now)))
            }
            return enqueueCommand(for: request, now: now)
        }
        let replies = try await redis.pipeline(commands, loading: [QueueScripts.enqueueOnce.script])
        return try replies.map { reply in
            let reply = try reply.throwingError()
            if let id = reply.string { return id }
            if let id = reply.array?.first?.string { return id }
            throw RedisError(code: .unexpectedReply, message: "enqueue answered \(reply)")
        }
    }

    /// The XADD that enqueues `request`, for callers that put it in their own MULTI/EXEC so that
    /// the job is written together with their records (no idempotency key: use ``enqueue(_:)``).
    package func enqueueCommand(for request: JobRequest, now: Int64 = JobQueue.nowMilliseconds()) -> RedisCommand {
        var command = RedisCommand("XADD", configuration.streamKey, "*")
        Job.appendFields(of: request, now: now, to: &command)
        return command
    }

    /// The stream key and the field/value pairs of a new job, for a script that adds the job
    /// together with other writes (`XADD <stream> * <fields…>`).
    package func enqueueFields(for request: JobRequest, now: Int64 = JobQueue.nowMilliseconds()) -> (stream: String, fields: [any RedisArgument]) {
        (configuration.streamKey, Job.fields(for: request, now: now))
    }

    package func enqueue(_ requests: [JobRequest], at times: [Int64]) async throws {
        let now = Self.nowMilliseconds()
        let commands = zip(requests, times).map { request, time in
            QueueScripts.schedule.command(QueueScripts.EnqueueCall(stream: configuration.streamKey, key: configuration.delayedKey, time: time,
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
