import Hiredis

/// A job waiting in the delayed set: a scheduled send (`sendAt`) or a retry, due at `due`.
package struct DelayedJob: Sendable, Hashable {
    /// Milliseconds since 1970 when it is admitted into its app's lane.
    package let due: Int64
    /// The packed member as stored: what removing it names.
    package let member: [UInt8]
    /// Its fields read as a job (id: its origin); nil when they cannot be.
    package let job: Job?

    /// A retry has failed at least once; anything else waiting is a scheduled send.
    package var isRetry: Bool { (job?.attempt ?? 0) > 0 || job?.lastError != nil }
    /// Its app (`_` for a job that names none).
    package var app: String { job?.app ?? JobRequest.sharedApp }
}

extension JobQueue {
    /// Delayed jobs due at or after `from` (ms), oldest due first, skipping the first `skip` due
    /// exactly at `from`; at most `count` (one script call).
    package func delayedJobs(from: Int64, skip: Int = 0, count: Int) async throws -> [DelayedJob] {
        let call = QueueScripts.DelayedPageCall(key: configuration.delayedKey, from: from, skip: skip, count: count)
        return Self.delayedJobs(from: try await redis.run(QueueScripts.delayedPage, call))
    }

    /// The script's rows `{due, member, fields}` as jobs.
    static func delayedJobs(from reply: RedisValue) -> [DelayedJob] {
        (reply.array ?? []).compactMap { row in
            guard let parts = row.array, parts.count == 3, let due = parts[0].string.flatMap(Double.init), let member = parts[1].bytes
            else { return nil }
            let fields = parts[2].array ?? []
            var origin = "delayed"
            for index in stride(from: 0, to: fields.count - 1, by: 2) where fields[index].string == "origin" {
                origin = fields[index + 1].string ?? origin
            }
            let job = try? Job(entry: .array([.bulk(Array(origin.utf8)), .array(fields)]))
            return DelayedJob(due: Int64(due), member: member, job: job)
        }
    }

    /// Removes these delayed jobs (those still there), in one call; how many were removed.
    package func removeDelayed(_ members: [[UInt8]]) async throws -> Int {
        guard !members.isEmpty else { return 0 }
        var command = RedisCommand("ZREM", configuration.delayedKey)
        for member in members { command.append(member) }
        return try await redis.pipeline([command]).first?.throwingError().int ?? 0
    }

    /// Makes these delayed jobs (those still there) due at `time` (ms since 1970; now by default):
    /// a retry sent now rather than after its back-off. One `ZADD XX CH` per 500, in one pipeline;
    /// `XX` adds nothing back, so a job promoted or removed meanwhile stays gone. How many moved.
    package func makeDue(_ members: [[UInt8]], at time: Int64 = JobQueue.nowMilliseconds()) async throws -> Int {
        guard !members.isEmpty else { return 0 }
        var commands: [RedisCommand] = []
        for start in stride(from: 0, to: members.count, by: 500) {
            var command = RedisCommand("ZADD", configuration.delayedKey, "XX", "CH")
            for member in members[start..<min(start + 500, members.count)] {
                command.append(time)
                command.append(member)
            }
            commands.append(command)
        }
        var moved = 0
        for reply in try await redis.pipeline(commands) { moved += try reply.throwingError().int ?? 0 }
        return moved
    }
}

extension JobQueue {
    /// The delayed jobs due exactly at each of `dues` (ms), in one pipelined round trip (at most
    /// 100 per due time).
    package func delayedJobs(dueAt dues: [Int64]) async throws -> [DelayedJob] {
        guard !dues.isEmpty else { return [] }
        let calls = dues.map { QueueScripts.DelayedPageCall(key: configuration.delayedKey, from: $0, skip: 0, count: 100) }
        let replies = try await redis.run(QueueScripts.delayedPage, calls: calls)
        return zip(dues, replies).flatMap { due, reply in Self.delayedJobs(from: reply).filter { $0.due == due } }
    }
}
