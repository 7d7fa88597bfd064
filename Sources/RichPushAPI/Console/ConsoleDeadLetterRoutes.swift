import Foundation
import Hummingbird
import RichPushCore
import RichPushQueue
import RichPushStorage

/// The dead letters page and its actions: replay the selected ones, or all that match the
/// filter in two steps: `count` (the server counts the matches and answers a single-use
/// confirmation bound to exactly that set, see ``DeadLetterSearch``) and `replay` with that
/// confirmation and the number the operator confirms. Both actions are audited before and after.
struct ConsoleDeadLetterRoutes: Sendable {
    let routes: ConsoleRoutes

    /// Most letters a page lists, and most a selection may name.
    static let pageSize = 50
    static let maxSelection = 500

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("dead-letters") { request, _ in
            let session = try await routes.session(request)
            let filter = try DeadLetterFilter(try ConsoleForm.query(of: request), access: session.access)
            let (found, complete) = try await routes.search.newest(filter, limit: Self.pageSize, scanLimit: routes.configuration.listScanLimit)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json(["deadLetters": found.map(Self.json), "complete": complete, "filter": filter.summary])
            }
            let page = DeadLetterPage(filter: filter, found: found, complete: complete,
                                      canAct: session.access.role >= .operator && !routes.configuration.readOnly)
            return ConsolePage.response(ConsolePage.layout(title: "Dead letters", session: session, readOnly: routes.configuration.readOnly, body: page.html))
        }
        console.post("dead-letters/count") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "dlq.count", needs: .operator)
            let filter = try DeadLetterFilter(try await ConsoleForm.body(of: request), access: session.access)
            let (count, marks) = try await routes.search.count(filter)
            var token: String?
            if count > 0 {
                let encoded = String(decoding: try JSONEncoder().encode(Confirmation(filter: filter, marks: marks, count: count)), as: UTF8.self)
                token = try await routes.backend.store.createConfirmation(["user": session.user, "action": "dlq.replay-matching", "body": encoded],
                                                                         lifetime: routes.configuration.confirmationLifetime)
            }
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json(["count": count, "token": token.map { $0 as Any } ?? NSNull(), "filter": filter.summary])
            }
            return ConsolePage.response(ConsolePage.layout(title: "Confirm replay", session: session, body: DeadLetterPage.confirmation(filter: filter, count: count, token: token)))
        }
        console.post("dead-letters/replay") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "dlq.replay", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            let result: (action: String, target: String, requested: Int, done: Int)
            if let token = form["token"] {
                result = try await replayMatching(token: token, confirmed: form["confirm"], session: session, address: context.clientAddress)
            } else {
                result = try await replaySelected(form.all("id"), session: session, address: context.clientAddress)
            }
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json(["action": result.action, "requested": result.requested, "replayed": result.done])
            }
            return ConsolePage.response(ConsolePage.layout(title: "Replayed", session: session, body: """
                <h1>Replayed \(result.done) dead letter\(result.done == 1 ? "" : "s")</h1>
                <p role="status">\(result.done) of the \(result.requested) asked for went back into the queue\(result.done < result.requested ? "; the others were no longer dead letters (replayed or purged meanwhile)" : "").</p>
                <p><a href="/console/dead-letters">Back to the dead letters</a></p>
                """))
        }
    }

    /// What a confirmation binds: the filter, each partition's mark, the count the operator saw.
    struct Confirmation: Codable {
        let filter: DeadLetterFilter
        let marks: [String: String]
        let count: Int
    }

    private func replayMatching(token: String, confirmed: String?, session: ConsoleSession, address: String) async throws
        -> (action: String, target: String, requested: Int, done: Int) {
        guard token.utf8.count <= 64, let confirmed, let number = Int(confirmed) else {
            throw APIError.badRequest("give the confirmation token and confirm, the number of dead letters you mean to replay", code: "missing_confirmation")
        }
        // Taken whatever follows: a confirmation is used at most once.
        guard let stored = try await routes.backend.store.takeConfirmation(token), stored["user"] == session.user,
              stored["action"] == "dlq.replay-matching", let body = stored["body"],
              let confirmation = try? JSONDecoder().decode(Confirmation.self, from: Data(body.utf8)) else {
            throw APIError(.conflict, code: "confirmation_unknown", message: "this confirmation is unknown, used or expired: count the matches again")
        }
        guard number == confirmation.count else {
            throw APIError(.conflict, code: "confirmation_mismatch",
                           message: "\(confirmation.count) dead letters matched when counted, not \(number): count again and confirm that number")
        }
        let target = confirmation.filter.summary + " (as counted: " + confirmation.marks.sorted { $0.key < $1.key }.map { "\($0.key) ≤ \($0.value)" }.joined(separator: ", ") + ")"
        let replayed = try await audited("dlq.replay-matching", target: target, requested: confirmation.count, session: session, address: address) {
            try await routes.search.replayMatching(confirmation.filter, marks: confirmation.marks, ledger: routes.backend.ledger).replayed
        }
        return ("dlq.replay-matching", target, confirmation.count, replayed)
    }

    private func replaySelected(_ references: [String], session: ConsoleSession, address: String) async throws
        -> (action: String, target: String, requested: Int, done: Int) {
        guard (1...Self.maxSelection).contains(references.count) else {
            throw APIError.badRequest("select 1 to \(Self.maxSelection) dead letters (or replay all that match the filter)", code: "bad_selection")
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
                if let hidden = try await queue.deadLetters(ids: ids).first(where: { !session.access.sees(app: DeadLetterFilter.app(of: $0)) }) {
                    throw APIError(.forbidden, code: "console_forbidden", message: "dead letter \(queue.configuration.partition)/\(hidden.id) is of an app you do not see")
                }
            }
        }
        let target = unique.prefix(20).joined(separator: " ") + (unique.count > 20 ? " … (\(unique.count) in all)" : "")
        let replayed = try await audited("dlq.replay-selected", target: target, requested: unique.count, session: session, address: address) {
            try await routes.search.replay(unique, ledger: routes.backend.ledger)
        }
        return ("dlq.replay-selected", target, unique.count, replayed)
    }

    /// Runs `action` between two audit entries: `started` before (no entry, no action), then
    /// `ok` with how many it did, or `failed` with why.
    private func audited(_ action: String, target: String, requested: Int, session: ConsoleSession, address: String,
                         _ body: () async throws -> Int) async throws -> Int {
        let store = routes.backend.store
        try await store.audit(.init(user: session.user, action: action, target: target, requested: requested, done: 0, address: address, outcome: "started"))
        let done: Int
        do {
            done = try await body()
        } catch {
            try await store.audit(.init(user: session.user, action: action, target: target, requested: requested, done: 0, address: address,
                                        outcome: String("failed: \(error)".prefix(200))))
            throw error
        }
        try await store.audit(.init(user: session.user, action: action, target: target, requested: requested, done: done, address: address))
        return done
    }

    static func json(_ found: DeadLetterSearch.Found) -> [String: Any] {
        ["ref": found.reference, "app": DeadLetterFilter.app(of: found.letter), "type": found.letter.job?.type ?? NSNull(), "error": found.letter.error,
         "origin": found.letter.origin, "at": found.at, "attempt": found.letter.job?.attempt ?? 0]
    }
}
