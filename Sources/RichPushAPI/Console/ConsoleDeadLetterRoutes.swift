import Foundation
import Hummingbird
import RichPushCore
import RichPushQueue
import RichPushStorage

/// What an operator does to dead letters: replay them (back into the queue, their devices
/// queued again) or purge them (deleted for good).
enum DeadLetterAction: String, Sendable, CaseIterable {
    case replay, purge

    var verb: String { self == .replay ? "Replay" : "Purge" }
    var past: String { self == .replay ? "Replayed" : "Purged" }
    var outcome: String { self == .replay ? "went back into the queue" : "were deleted" }
}

/// The dead letters page and its actions: replay or purge the selected ones, or all that match
/// the filter in two steps: `count` (the server counts the matches and answers a single-use
/// confirmation bound to exactly that set and action, see ``DeadLetterSearch``), then the action
/// with that confirmation and the number the operator confirms. Every action is audited before
/// and after.
struct ConsoleDeadLetterRoutes: Sendable {
    let routes: ConsoleRoutes

    /// Most letters a page lists, and most a selection may name.
    static let pageSize = 50
    static let maxSelection = 500

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("dead-letters") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let filter = try DeadLetterFilter(form, access: session.access)
            let cursor = try form["cursor"].map(DeadLetterSearch.Found.Position.init)
            let (found, complete, next) = try await routes.search.newest(
                filter, limit: Self.pageSize, scanLimit: routes.configuration.listScanLimit, after: cursor)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "deadLetters": found.map(Self.json), "complete": complete, "filter": filter.summary, "next": next?.text ?? NSNull(),
                ])
            }
            let page = DeadLetterPage(
                filter: filter, found: found, complete: complete, next: next,
                canAct: session.access.role >= .operator && !routes.configuration.readOnly)
            return ConsolePage.response(
                ConsolePage.layout(title: "Dead letters", session: session, readOnly: routes.configuration.readOnly, body: page.html))
        }
        console.post("dead-letters/count") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "dlq.count", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            guard let action = DeadLetterAction(rawValue: form["action"] ?? "replay") else {
                throw APIError.badRequest("action must be replay or purge", code: "bad_action")
            }
            let filter = try DeadLetterFilter(form, access: session.access)
            let (count, marks) = try await routes.search.count(filter)
            let token = try await routes.issueConfirmation(
                Confirmation(filter: filter, marks: marks, count: count),
                action: Self.auditName(action, matching: true), count: count, session: session)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "count": count, "token": token.map { $0 as Any } ?? NSNull(), "filter": filter.summary, "action": action.rawValue,
                ])
            }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Confirm", session: session,
                    body: DeadLetterPage.confirmation(action, filter: filter, count: count, token: token)))
        }
        for action in DeadLetterAction.allCases {
            console.post("dead-letters/\(action.rawValue)") { request, context in try await act(action, request, context) }
        }
    }

    /// What a confirmation binds: the filter, each partition's mark, the count the operator saw.
    struct Confirmation: Codable, Sendable {
        let filter: DeadLetterFilter
        let marks: [String: String]
        let count: Int
    }

    static func auditName(_ action: DeadLetterAction, matching: Bool) -> String {
        "dlq.\(action.rawValue)-\(matching ? "matching" : "selected")"
    }

    private func act(_ action: DeadLetterAction, _ request: Request, _ context: APIRequestContext) async throws -> Response {
        let session = try await routes.session(request)
        try await routes.authorizeChange(request, context: context, session: session, action: "dlq.\(action.rawValue)", needs: .operator)
        let form = try await ConsoleForm.body(of: request)
        if let token = form["token"] {
            return try await actOnMatching(
                action, token: token, confirmed: form["confirm"], request: request, context: context, session: session)
        }
        let references = form.all("id")
        let done = try await actOnSelected(action, references, session: session, address: context.clientAddress)
        let requested = Set(references).count
        if !ConsolePage.wantsHTML(request) {
            return ConsolePage.json(["action": action.rawValue, "requested": requested, "done": done])
        }
        return ConsolePage.response(
            ConsolePage.layout(title: action.past, session: session, body: Self.result(action, done: done, requested: requested, level: 1)))
    }

    /// What an action did, as the page says it: a heading of `level` and the numbers.
    static func result(_ action: DeadLetterAction, done: Int, requested: Int, level: Int) -> HTML {
        let heading = HTML(trusted: "h\(level)")
        return """
            <\(heading) id="result">\(action.past) \(ConsolePage.number(done)) dead letter\(done == 1 ? "" : "s")</\(heading)>
            <p role="status">\(ConsolePage.number(done)) of the \(ConsolePage.number(requested)) asked for \(action.outcome)\(done < requested ? "; the others were no longer dead letters (replayed or purged meanwhile)" : "").</p>
            <p><a href="/console/dead-letters">Back to the dead letters</a></p>
            """
    }

    /// All that match: the confirmation is taken and checked, then the action runs on the counted
    /// set and answers as it goes (``ConsoleBulkAction``).
    private func actOnMatching(
        _ action: DeadLetterAction, token: String, confirmed: String?, request: Request, context: APIRequestContext,
        session: ConsoleSession
    ) async throws -> Response {
        // Taken whatever follows: a confirmation is used at most once, for the action it was counted for.
        let name = Self.auditName(action, matching: true)
        let (confirmation, _) = try await routes.takeConfirmation(
            token, confirmed: confirmed, action: name, as: Confirmation.self, session: session,
            noun: "dead letters", verb: action.rawValue
        ) { $0.count }
        let target =
            confirmation.filter.summary + " (as counted: "
            + confirmation.marks.sorted { $0.key < $1.key }.map { "\($0.key) ≤ \($0.value)" }.joined(separator: ", ") + ")"
        let requested = confirmation.count
        let wording = ConsoleBulkAction.Wording(
            title: action.past,
            heading:
                "\(action == .replay ? "Replaying" : "Purging") \(ConsolePage.number(requested)) dead letter\(requested == 1 ? "" : "s")",
            line: { "<li>\(action.past) \(ConsolePage.number($0)) of \(ConsolePage.number(requested))</li>" },
            result: { Self.result(action, done: $0, requested: requested, level: 2) })
        let bulk = ConsoleBulkAction(
            action: action.rawValue, requested: requested, wording: wording,
            audit: routes.auditTrail(name, target: target, requested: requested, session: session, address: context.clientAddress))
        return try await bulk.respond(.init(request), session: session, context: context) { [routes] progress in
            try await routes.search.apply(
                action, matching: confirmation.filter, marks: confirmation.marks, ledger: routes.backend.ledger, progress: progress
            ).done
        }
    }

    private func actOnSelected(
        _ action: DeadLetterAction, _ references: [String], session: ConsoleSession, address: String
    ) async throws -> Int {
        guard (1...Self.maxSelection).contains(references.count) else {
            throw APIError.badRequest(
                "select 1 to \(Self.maxSelection) dead letters (or act on all that match the filter)", code: "bad_selection")
        }
        let unique = Array(Set(references)).sorted()
        // Only letters of apps the user sees (one pipelined read per partition).
        if session.access.apps != nil {
            var byPartition: [String: [String]] = [:]
            for reference in unique {
                let parts = reference.split(separator: "/", maxSplits: 1).map(String.init)
                if parts.count == 2, StreamIDText.isValid(parts[1]) { byPartition[parts[0], default: []].append(parts[1]) }
            }
            for queue in routes.search.queues {
                guard let ids = byPartition[queue.configuration.partition] else { continue }
                if let hidden = try await queue.deadLetters(ids: ids).first(where: {
                    !session.access.sees(app: DeadLetterFilter.app(of: $0))
                }) {
                    throw APIError(
                        .forbidden, code: "console_forbidden",
                        message: "dead letter \(queue.configuration.partition)/\(hidden.id) is of an app you do not see")
                }
            }
        }
        let target = unique.prefix(20).joined(separator: " ") + (unique.count > 20 ? " … (\(unique.count) in all)" : "")
        return try await routes.audited(
            Self.auditName(action, matching: false), target: target, requested: unique.count, session: session, address: address
        ) {
            try await routes.search.apply(action, to: unique, ledger: routes.backend.ledger)
        }
    }

    static func json(_ found: DeadLetterSearch.Found) -> [String: Any] {
        [
            "ref": found.reference, "app": DeadLetterFilter.app(of: found.letter), "type": found.letter.job?.type ?? NSNull(),
            "error": found.letter.error,
            "origin": found.letter.origin, "at": found.at, "attempt": found.letter.job?.attempt ?? 0,
            "platforms": found.letter.job?.failedOn ?? [],
        ]
    }
}
