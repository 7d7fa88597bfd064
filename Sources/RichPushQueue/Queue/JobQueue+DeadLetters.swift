import Hiredis

/// A job in the dead-letter stream, with why it died.
package struct DeadLetter: Sendable, Hashable {
    /// Its id in the dead-letter stream.
    package let id: String
    package let job: Job?
    package let error: String
    package let origin: String
    /// Milliseconds since 1970.
    package let deadAt: Int64
    /// Why the entry could not be read as a job, when it could not.
    package let undecodable: String?
}

extension JobQueue {
    /// Dead letters, newest first, at most `count`, starting before `before` (an id) if given.
    package func deadLetters(count: Int = 20, before: String? = nil) async throws -> [DeadLetter] {
        let end = before.map { "(" + $0 } ?? "+"
        let reply = try await redis.send("XREVRANGE", configuration.deadKey, end, "-", "COUNT", count)
        return (reply.array ?? []).map(Self.deadLetter)
    }

    /// Dead letters newest first from `end` (an id, `(` before one excludes it, `+` the newest),
    /// at most `count`: a backward scan in pages.
    package func deadLetters(count: Int, through end: String) async throws -> [DeadLetter] {
        let reply = try await redis.send("XREVRANGE", configuration.deadKey, end, "-", "COUNT", count)
        return (reply.array ?? []).map(Self.deadLetter)
    }

    /// One dead letter by its id in the dead-letter stream, or nil.
    package func deadLetter(id: String) async throws -> DeadLetter? {
        let reply = try await redis.send("XRANGE", configuration.deadKey, id, id)
        return reply.array?.first.map(Self.deadLetter)
    }

    /// The dead letters of `ids` that are still there, in one pipelined round trip.
    package func deadLetters(ids: [String]) async throws -> [DeadLetter] {
        let replies = try await redis.sendAll(ids.map { RedisCommand("XRANGE", configuration.deadKey, $0, $0) })
        return replies.compactMap { $0.array?.first.map(Self.deadLetter) }
    }

    /// Dead letters oldest first, at most `count`, from `start` to `end` (stream ids; `(` before
    /// one excludes it, `-` and `+` are the ends): a forward scan in pages.
    package func deadLetters(from start: String, through end: String, count: Int) async throws -> [DeadLetter] {
        let reply = try await redis.send("XRANGE", configuration.deadKey, start, end, "COUNT", count)
        return (reply.array ?? []).map(Self.deadLetter)
    }

    /// The id of the newest dead letter, or nil when there is none: what a count made now covers.
    package func lastDeadLetterID() async throws -> String? {
        try await redis.send("XREVRANGE", configuration.deadKey, "+", "-", "COUNT", 1).array?.first?.array?.first?.string
    }

    package func deadLetterCount() async throws -> Int {
        try await redis.send("XLEN", configuration.deadKey).int ?? 0
    }

    /// Moves the given dead letters (all of them when `ids` is nil) back into the queue as fresh
    /// jobs, in batches of 500 per script call; returns how many were moved. `replayed` gets the
    /// jobs of each batch once they are back in the queue (with their new ids: tickets under fair
    /// scheduling, where they wait in their app's lane), for the caller to
    /// undo what their handler's ``JobHandler/willDeadLetter(_:)`` recorded; when it throws, the
    /// replay stops there (that batch stays replayed). `progress` then gets how many that batch
    /// moved (the console's bulk replay shows it as it goes).
    @discardableResult
    package func replayDeadLetters(
        ids: [String]? = nil, replayed: ([Job]) async throws -> Void = { _ in },
        progress: (Int) async -> Void = { _ in }
    ) async throws -> Int {
        var moved = 0
        if let ids {
            for batch in ids.chunked(500) {
                let count = try await replayDeadBatch(batch, replayed)
                moved += count
                await progress(count)
            }
            return moved
        }
        while true {
            let page = try await redis.send("XRANGE", configuration.deadKey, "-", "+", "COUNT", 500).array ?? []
            let batch = page.compactMap { $0.array?.first?.string }
            if batch.isEmpty { return moved }
            let count = try await replayDeadBatch(batch[...], replayed)
            moved += count
            await progress(count)
        }
    }

    /// Deletes the given dead letters (all when `ids` is nil); returns how many were deleted.
    /// `progress` gets how many each `XDEL` of 500 deleted.
    @discardableResult
    package func purgeDeadLetters(ids: [String]? = nil, progress: (Int) async -> Void = { _ in }) async throws -> Int {
        guard let ids else {
            let count = try await deadLetterCount()
            try await redis.send("DEL", configuration.deadKey)
            return count
        }
        var deleted = 0
        for batch in ids.chunked(500) {
            var command = RedisCommand("XDEL", configuration.deadKey)
            for id in batch { command.append(id) }
            let count = try await redis.send(command).int ?? 0
            deleted += count
            await progress(count)
        }
        return deleted
    }

    private func replayDeadBatch(_ ids: ArraySlice<String>, _ replayed: ([Job]) async throws -> Void) async throws -> Int {
        let entries =
            try await redis.run(
                QueueScripts.replayDead,
                QueueScripts.ReplayCall(dead: configuration.deadKey, admission: QueueScripts.Admission(configuration), ids: Array(ids))
            ).array ?? []
        // An undecodable dead letter goes back as it was, and its handler had nothing to undo.
        let jobs = entries.compactMap { try? Job(entry: $0) }
        if !jobs.isEmpty { try await replayed(jobs) }
        return entries.count
    }

    private static let errField = Array("err".utf8), originField = Array("origin".utf8), deadAtField = Array("deadAt".utf8)

    static func deadLetter(_ entry: RedisValue) -> DeadLetter {
        let parts = entry.array ?? []
        let id = parts.first?.string ?? "?"
        // Only the three fields the dead letter adds, picked in one pass (the last of a name wins,
        // as in a dictionary): a count or replay reads every letter, and the job's own fields are
        // decoded once, by the job.
        var error: String?, origin: String?, deadAt: String?
        let flat = parts.count > 1 ? (parts[1].array ?? []) : []
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard case .bulk(let name) = flat[index], (3...6).contains(name.count) else { continue }
            switch name {
            case Self.errField: error = flat[index + 1].string
            case Self.originField: origin = flat[index + 1].string
            case Self.deadAtField: deadAt = flat[index + 1].string
            default: continue
            }
        }
        let decoded = Self.delivery(entry)
        return DeadLetter(
            id: id,
            job: try? decoded.get(),
            error: error ?? "",
            origin: origin ?? id,
            deadAt: deadAt.flatMap { Int64($0) } ?? 0,
            undecodable: decoded.failureDescription)
    }
}

extension Result where Failure == JobDecodingError {
    var failureDescription: String? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
