import RichPushCore
import RichPushQueue
import RichPushStorage

/// Finds an app's notifications by creator, target tag, state and time, newest first, in
/// batches of ``batch`` ids per pipelined round trip (records, then the states of the matches),
/// stopping at a page of ``page`` or after ``scanLimit`` ids, with a cursor to go on.
///
/// There is no index by app and time: ids come from one deployment-wide sequence (in blocks of
/// 64 per API process, so they follow time only roughly) and every app's share of them is read
/// newest first, or, with a creator, that creator's own index. A window's `from` stops the scan
/// at the first batch whose records all came before it.
struct NotificationSearch: Sendable {
    static let page = 50
    static let batch = 500
    static let scanLimit = 20_000

    /// What to look for; every field checked and bounded when read from a query.
    struct Filter: Sendable {
        var app: AppID
        var creator: String?
        /// Part of the target expression (a tag), as written.
        var tag: String?
        var state: DeliveryState?
        var from: Int64?
        var to: Int64?
        /// Look at ids below this one (the previous page's cursor).
        var before: Int?

        static let maxNameBytes = 64
        static let maxTagBytes = 200

        init(_ form: ConsoleForm, access: ConsoleAccess, now: Int64 = JobQueue.nowMilliseconds()) throws {
            app = try ConsoleScope.app(form, access: access)
            if let creator = form["creator"] {
                guard creator.utf8.count <= Self.maxNameBytes else { throw Self.bad("creator is longer than \(Self.maxNameBytes) bytes") }
                self.creator = creator
            }
            if let tag = form["tag"] {
                guard tag.utf8.count <= Self.maxTagBytes else { throw Self.bad("tag is longer than \(Self.maxTagBytes) bytes") }
                self.tag = tag
            }
            if let state = form["state"] {
                guard let known = DeliveryState(rawValue: state) else {
                    throw Self.bad("state: one of \(DeliveryState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                self.state = known
            }
            from = try form["from"].map { try Self.time($0, "from", now: now) }
            to = try form["to"].map { try Self.time($0, "to", now: now) }
            if let from, let to, from >= to { throw Self.bad("from must be before to") }
            if let cursor = form["cursor"] {
                guard let value = Int(cursor), value > 0 else { throw Self.bad("cursor: a positive integer from the previous page") }
                before = value
            }
        }

        static func time(_ text: String, _ name: String, now: Int64) throws -> Int64 {
            do {
                return try DeadLetterFilter.time(text, name: name, now: now)
            } catch {
                throw bad("\(name): give an ISO 8601 time (2026-11-26T17:00:00Z), milliseconds, or -30s / -15m / -2h / -7d")
            }
        }

        static func bad(_ message: String) -> APIError { APIError.badRequest(message, code: "bad_filter") }

        func matches(_ record: RichNotification) -> Bool {
            if let from, record.createdAt < from { return false }
            if let to, record.createdAt >= to { return false }
            if let creator, record.creator != creator { return false }
            if let tag, !record.target.contains(tag) { return false }
            return true
        }

        /// The fields that give this filter back (for the next page's link), without the cursor.
        var queryPairs: [(String, String)] {
            [
                ("app", app.rawValue), ("creator", creator ?? ""), ("tag", tag ?? ""), ("state", state?.rawValue ?? ""),
                ("from", from.map(String.init) ?? ""), ("to", to.map(String.init) ?? ""),
            ]
        }
    }

    /// A page: the matches with their states, how many ids were looked at, and where the next
    /// page starts (nil: nothing older to look at). `limited`: the scan stopped at its limit.
    struct Found: Sendable {
        var notifications: [(record: RichNotification, state: DeliveryState?)] = []
        var scanned = 0
        var next: Int?
        var limited = false
    }

    let store: RedisNotificationStore

    func run(_ filter: Filter, scanLimit: Int = Self.scanLimit) async throws -> Found {
        var found = Found()
        var before: Int
        if let given = filter.before { before = given } else { before = try await store.idCeiling() }
        var matched: [RichNotification] = []
        var states: [Int: DeliveryState] = [:]
        scan: while before > 1 {
            if found.scanned >= scanLimit {
                found.limited = true
                found.next = before
                break
            }
            let ids: [Int]
            if let creator = filter.creator {
                ids = try await store.createdIDs(by: creator, before: before, limit: Self.batch)
            } else {
                ids = Array(stride(from: before - 1, through: max(1, before - Self.batch), by: -1))
            }
            guard let last = ids.last else { break }
            found.scanned += ids.count
            let records = try await store.notifications(ids: ids)
            let candidates = records.filter(filter.matches)
            if let wanted = filter.state {
                let read = try await store.states(ids: candidates.map(\.id))
                for record in candidates where read[record.id] == wanted {
                    matched.append(record)
                    states[record.id] = wanted
                    if matched.count == Self.page {
                        found.next = record.id
                        break scan
                    }
                }
            } else {
                for record in candidates {
                    matched.append(record)
                    if matched.count == Self.page {
                        found.next = record.id
                        break scan
                    }
                }
            }
            // Past the window's start: a whole batch of records from before it ends the search.
            if let from = filter.from, !records.isEmpty, records.allSatisfy({ $0.createdAt < from }) { break }
            if filter.creator != nil && ids.count < Self.batch { break }
            before = last
        }
        if filter.state == nil { states = try await store.states(ids: matched.map(\.id)) }
        found.notifications = matched.map { ($0, states[$0.id]) }
        return found
    }
}

/// The app a console query names (`app`, default `default`), checked and in the user's scope.
enum ConsoleScope {
    static func app(_ form: ConsoleForm, access: ConsoleAccess) throws -> AppID {
        let text = form["app"] ?? AppID.default.rawValue
        guard let app = AppID(validating: text) else {
            throw APIError.badRequest("app: \(AppID.problem(text) ?? "not an app id")", code: "bad_app_id")
        }
        guard access.sees(app: app.rawValue) else {
            throw APIError(.forbidden, code: "console_forbidden", message: "you do not see app \(app.rawValue)")
        }
        return app
    }
}
