import Hiredis
package import RichPushQueue

extension JobQueue {
    /// The jobs this queue was given, for a test that runs no worker: those waiting in their
    /// scopes' lanes (fair scheduling) plus the stream's entries (arrival order, or taken).
    package func jobCount() async throws -> Int {
        let replies = try await redis.pipeline([
            RedisCommand("HGET", configuration.schedulerKey, "waiting"),
            RedisCommand("XLEN", configuration.streamKey),
        ])
        return try replies.reduce(0) { $0 + (try $1.throwingError().int ?? 0) }
    }

    /// Moves every job waiting in a lane into the stream, as a worker's take does but without
    /// reading them, so that a test can read the entries' fields there.
    package func takeWaitingJobs() async throws {
        let waiting = try await redis.send("HGET", configuration.schedulerKey, "waiting").int ?? 0
        if waiting > 0 { _ = try await take(for: "tests", count: waiting, read: false) }
    }
}
