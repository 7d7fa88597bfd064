import RichPushCore
import RichPushQueue

/// Finds, counts and cancels the scheduled sends and retries a ``DelayedFilter`` means, in every
/// partition, reading each delayed set in slices of ``page`` members (one script call each,
/// oldest due first), never one call per job.
///
/// "All that match" is exact: unlike dead letters, the delayed set has no order of arrival to
/// mark, so a count records the notifications it found (`app:id`, at most ``maxCount``) and the
/// cancel re-applies the filter and acts only on those: a scheduled send created after the count
/// is left alone, whatever it matches.
struct DelayedSearch: Sendable {
    static let page = 1000
    /// Most scheduled sends one count may confirm (the confirmation holds their ids).
    static let maxCount = 10_000

    let queues: [JobQueue]

    /// A delayed job with its partition.
    struct Found: Sendable {
        let partition: String
        let job: DelayedJob
        var app: String { DelayedFilter.app(of: job) }
        /// `app:id` of the notification it sends, when a cancel can stop it.
        var notification: String? { DelayedFilter.notification(of: job).map { "\($0.app.rawValue):\($0.id)" } }
        /// How the list orders and pages: due time, then partition and member.
        static func precedes(_ a: Found, _ b: Found) -> Bool {
            if a.job.due != b.job.due { return a.job.due < b.job.due }
            if a.partition != b.partition { return a.partition < b.partition }
            return a.job.member.lexicographicallyPrecedes(b.job.member)
        }
    }

    /// Where a page starts: due at or after `due`, less the first `skip` of those due exactly then.
    struct Cursor: Sendable, Hashable {
        var due: Int64
        var skip: Int

        init(due: Int64, skip: Int) {
            self.due = due
            self.skip = skip
        }

        /// `<due>.<skip>`, as a page's "next" link carries it.
        init(_ text: String) throws {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let due = Int64(parts[0]), due >= 0, let skip = Int(parts[1]), (0...1_000_000).contains(skip) else {
                throw APIError.badRequest("cursor: give the one a page's next link carries", code: "bad_cursor")
            }
            self.init(due: due, skip: skip)
        }

        var text: String { "\(due).\(skip)" }
    }

    /// The first `limit` matches from `cursor` over all partitions, reading at most `scanLimit`
    /// jobs per partition; the cursor of the next page (nil: no more), and whether every partition
    /// was read far enough.
    func page(
        _ filter: DelayedFilter, from cursor: Cursor?, limit: Int, scanLimit: Int
    ) async throws
        -> (found: [Found], next: Cursor?, complete: Bool)
    {
        let start = max(cursor?.due ?? 0, filter.from ?? 0)
        var found: [Found] = []
        var complete = true
        // Enough from each partition to fill the page after dropping the cursor's ties.
        let wanted = limit + (cursor?.skip ?? 0) + 1
        for queue in queues {
            var matches = 0
            var scanned = 0
            try await scan(queue, filter, from: start) { jobs, read in
                for job in jobs where matches < wanted {
                    found.append(Found(partition: queue.configuration.partition, job: job))
                    matches += 1
                }
                scanned += read
                if scanned >= scanLimit && matches < wanted { complete = false }
                return matches < wanted && scanned < scanLimit
            }
        }
        found.sort(by: Found.precedes)
        if let cursor {
            var dropped = 0
            found.removeAll { item in
                guard item.job.due == cursor.due, dropped < cursor.skip else { return false }
                dropped += 1
                return true
            }
        }
        let shown = Array(found.prefix(limit))
        guard found.count > limit, let last = shown.last else { return (shown, nil, complete) }
        let ties = shown.filter { $0.job.due == last.job.due }.count + (last.job.due == cursor?.due ? cursor?.skip ?? 0 : 0)
        return (shown, Cursor(due: last.job.due, skip: ties), complete)
    }

    /// The notifications of the scheduled sends that match now (`app:id`, sorted), or a 400 past ``maxCount``.
    func count(_ filter: DelayedFilter) async throws -> [String] {
        try await collect(filter, noun: "scheduled sends") { $0.notification }
    }

    /// The distinct `key`s of the jobs that match now (those it gives one), sorted, or a 400 past
    /// ``maxCount`` naming `noun`: what a count confirms.
    func collect(_ filter: DelayedFilter, noun: String, key: (Found) -> String?) async throws -> [String] {
        var keys: Set<String> = []
        for queue in queues {
            try await scan(queue, filter, from: filter.from ?? 0) { jobs, _ in
                for job in jobs {
                    if let key = key(Found(partition: queue.configuration.partition, job: job)) { keys.insert(key) }
                }
                guard keys.count <= Self.maxCount else {
                    throw APIError.badRequest(
                        "more than \(Self.maxCount) \(noun) match: narrow the filter (app, platform, time window, text)", code: "too_many")
                }
                return true
            }
        }
        return keys.sorted()
    }

    /// The scheduled sends that match now and are among `counted` (`app:id`), by partition.
    func matching(_ filter: DelayedFilter, among counted: Set<String>) async throws -> [(queue: JobQueue, found: [Found])] {
        var result: [(JobQueue, [Found])] = []
        for queue in queues {
            var found: [Found] = []
            try await scan(queue, filter, from: filter.from ?? 0) { jobs, _ in
                for job in jobs {
                    let item = Found(partition: queue.configuration.partition, job: job)
                    if let notification = item.notification, counted.contains(notification) { found.append(item) }
                }
                return true
            }
            if !found.isEmpty { result.append((queue, found)) }
        }
        return result
    }

    /// Calls `body` with each slice's matches (and how many it read), oldest due first, from `from`
    /// to the filter's end or until `body` answers false.
    func scan(
        _ queue: JobQueue, _ filter: DelayedFilter, from: Int64,
        _ body: ([DelayedJob], Int) async throws -> Bool
    ) async throws {
        var cursor = Cursor(due: from, skip: 0)
        let matches = filter.matcher()
        while true {
            let jobs = try await queue.delayedJobs(from: cursor.due, skip: cursor.skip, count: Self.page)
            let matching = jobs.filter(matches)
            guard try await body(matching, jobs.count), jobs.count == Self.page, let last = jobs.last else { return }
            if let to = filter.to, last.due >= to { return }
            let ties = jobs.reversed().prefix { $0.due == last.due }.count
            cursor = Cursor(due: last.due, skip: last.due == cursor.due ? cursor.skip + ties : ties)
        }
    }
}
