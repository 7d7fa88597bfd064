import RichPushQueue
import RichPushStorage

/// Finds, counts, replays and purges the dead letters a ``DeadLetterFilter`` means, in every partition,
/// in pages of ``page`` entries (one round trip each; a page's matches are replayed by the
/// queue's batched script, never one call per letter).
///
/// "All that match" is exact: a count records each partition's newest dead-letter id (its
/// *mark*) and the bulk action scans only up to it. Dead letters are never changed in place and
/// new ones get larger ids (stream ids only grow), so the action sees the counted set, less any
/// that left it meanwhile (replayed or purged by someone else), and nothing that arrived after
/// the count, whatever matches.
struct DeadLetterSearch: Sendable {
    static let page = 1000

    let queues: [JobQueue]

    /// A dead letter with its partition: `q0/<id>` in forms.
    struct Found: Sendable {
        let partition: String
        let letter: DeadLetter
        var reference: String { "\(partition)/\(letter.id)" }
        var at: Int64 { DeadLetterSearch.time(of: letter.id) }
        var position: Position { Position(partition: partition, id: letter.id) }

        /// Where a letter stands in the pages' order: newest id first, then partition; a page's
        /// "older" link carries its last one (`<partition>/<id>`, as a reference).
        struct Position: Sendable, Hashable {
            let partition: String
            let id: String

            init(partition: String, id: String) {
                self.partition = partition
                self.id = id
            }

            init(_ text: String) throws {
                let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2, (1...32).contains(parts[0].utf8.count), StreamIDText.isValid(parts[1]) else {
                    throw APIError.badRequest("cursor: give the one a page's older link carries", code: "bad_cursor")
                }
                self.init(partition: parts[0], id: parts[1])
            }

            var text: String { "\(partition)/\(id)" }

            func precedes(_ other: Position) -> Bool {
                let (mine, theirs) = (Self.numbers(id), Self.numbers(other.id))
                if mine != theirs { return mine.0 != theirs.0 ? mine.0 > theirs.0 : mine.1 > theirs.1 }
                return partition < other.partition
            }

            private static func numbers(_ id: String) -> (UInt64, UInt64) {
                let parts = id.split(separator: "-")
                return (parts.first.flatMap { UInt64($0) } ?? 0, parts.count > 1 ? UInt64(parts[1]) ?? 0 : 0)
            }
        }
    }

    /// The newest `limit` matches over all partitions older than `cursor` (the last one of the
    /// previous page), reading at most `scanLimit` letters per partition; `complete` is false when
    /// a partition had more to read; `next`, the cursor of the next page (nil: no more).
    func newest(
        _ filter: DeadLetterFilter, limit: Int, scanLimit: Int, after cursor: Found.Position? = nil
    ) async throws
        -> (found: [Found], complete: Bool, next: Found.Position?)
    {
        var found: [Found] = []
        var complete = true
        var more = false
        let isMatch = filter.matcher()
        for queue in queues {
            let partition = queue.configuration.partition
            // Past the cursor in the pages' order: its own id again only in the partitions after its own.
            var end = cursor.map { partition > $0.partition ? $0.id : "(" + $0.id } ?? "+"
            var scanned = 0
            var matches = 0
            scan: while matches < limit {
                let letters = try await queue.deadLetters(count: Self.page, through: end)
                for letter in letters {
                    let at = Self.time(of: letter.id)
                    if let from = filter.from, at < from { break scan }
                    if isMatch(letter, at) {
                        found.append(Found(partition: partition, letter: letter))
                        matches += 1
                        if matches == limit { more = true; break scan }
                    }
                }
                scanned += letters.count
                guard letters.count == Self.page, let last = letters.last else { break }
                if scanned >= scanLimit { complete = false; break }
                end = "(" + last.id
            }
        }
        found.sort { $0.position.precedes($1.position) }
        let shown = Array(found.prefix(limit))
        return (shown, complete, (found.count > limit || more) ? shown.last?.position : nil)
    }

    /// How many match now, and each partition's mark (absent: that partition had none).
    func count(_ filter: DeadLetterFilter) async throws -> (count: Int, marks: [String: String]) {
        var marks: [String: String] = [:]
        var count = 0
        for queue in queues {
            guard let mark = try await queue.lastDeadLetterID() else { continue }
            marks[queue.configuration.partition] = mark
            try await scan(queue, filter, through: mark) { count += $0.count }
        }
        return (count, marks)
    }

    /// Replays or purges what matches up to each partition's mark; how many matched then and how
    /// many were acted on (fewer when some left the dead letters in between). `progress` gets
    /// the running total acted on after each batch of 500.
    func apply(
        _ action: DeadLetterAction, matching filter: DeadLetterFilter, marks: [String: String],
        ledger: RedisDeliveryLedger, progress: (Int) async -> Void = { _ in }
    ) async throws -> (matched: Int, done: Int) {
        var matched = 0
        var done = 0
        for queue in queues {
            guard let mark = marks[queue.configuration.partition] else { continue }
            try await scan(queue, filter, through: mark) { letters in
                matched += letters.count
                // The total comes from the batches, as they go.
                _ = try await Self.apply(action, to: letters.map(\.id), in: queue, ledger: ledger) { count in
                    done += count
                    await progress(done)
                }
            }
        }
        return (matched, done)
    }

    /// Replays or purges the given `q0/<id>` references; how many were acted on.
    func apply(_ action: DeadLetterAction, to references: [String], ledger: RedisDeliveryLedger) async throws -> Int {
        var byPartition: [String: [String]] = [:]
        for reference in references {
            let parts = reference.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, queues.contains(where: { $0.configuration.partition == parts[0] }), StreamIDText.isValid(parts[1])
            else {
                throw APIError.badRequest("'\(reference.prefix(60))' is not a dead letter's reference (<partition>/<id>)", code: "bad_id")
            }
            byPartition[parts[0], default: []].append(parts[1])
        }
        var done = 0
        for queue in queues {
            guard let ids = byPartition[queue.configuration.partition] else { continue }
            done += try await Self.apply(action, to: ids, in: queue, ledger: ledger) { _ in }
        }
        return done
    }

    /// `richpush dlq replay`'s and `dlq purge`'s own code: batches of 500 per call, `progress`
    /// told each batch's count.
    private static func apply(
        _ action: DeadLetterAction, to ids: [String], in queue: JobQueue, ledger: RedisDeliveryLedger,
        progress: (Int) async -> Void
    ) async throws -> Int {
        switch action {
        case .replay: try await ledger.replayDeadLetters(ids, in: queue, progress: progress)
        case .purge: try await queue.purgeDeadLetters(ids: ids, progress: progress)
        }
    }

    /// Calls `body` with each page's matches, oldest first, from the filter's start to `mark`.
    private func scan(
        _ queue: JobQueue, _ filter: DeadLetterFilter, through mark: String,
        _ body: ([DeadLetter]) async throws -> Void
    ) async throws {
        var start = filter.from.map { "\($0)-0" } ?? "-"
        let matches = filter.matcher()
        while true {
            let letters = try await queue.deadLetters(from: start, through: mark, count: Self.page)
            let matching = letters.filter { matches($0, Self.time(of: $0.id)) }
            if !matching.isEmpty { try await body(matching) }
            guard letters.count == Self.page, let last = letters.last else { return }
            if let to = filter.to, Self.time(of: last.id) >= to { return }
            start = "(" + last.id
        }
    }

    /// The milliseconds of a stream id (`<ms>-<seq>`).
    static func time(of id: String) -> Int64 {
        Int64(id.prefix { $0 != "-" }) ?? 0
    }
}

/// A stream id as a form may carry it: `<ms>-<seq>`, digits only.
enum StreamIDText {
    static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { (1...20).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}
