import Foundation
import Hummingbird
import RichPushCore
import RichPushQueue

/// "Retry now" on the queues page: the retries waiting out their back-off (the selected ones, or
/// all that match in two steps as for dead letters: count, then confirm that number) are made due
/// at once; a worker admits them into their app's lane at its next promotion, as any due retry.
/// For the moment a provider is back: nothing is sent twice (the delivery ledger still decides
/// each push) and nothing is lost (a retry promoted or removed meanwhile is not added back).
/// Operator only, through ``ConsoleGuard``, audited before and after.
struct ConsoleRetryRoutes: Sendable {
    let routes: ConsoleRoutes

    var search: DelayedSearch { DelayedSearch(queues: routes.backend.queues) }

    /// What a "retry all that match" confirmation binds: the filter and the retries counted.
    struct Confirmation: Codable {
        let filter: DelayedFilter
        let retries: [String]
    }

    static let countAction = "retry.now-matching"

    func add(to console: RouterGroup<APIRequestContext>) {
        console.post("queues/retries/count") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "retry.count", needs: .operator)
            let filter = try DelayedFilter(try await ConsoleForm.body(of: request), access: session.access).retriesOnly
            let retries = try await search.countRetries(filter)
            let token = try await routes.issueConfirmation(
                Confirmation(filter: filter, retries: retries), action: Self.countAction,
                count: retries.count, session: session)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "count": retries.count, "token": token.map { $0 as Any } ?? NSNull(), "filter": filter.summary, "action": "retry-now",
                ])
            }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Confirm", session: session,
                    body: QueuePage.retryConfirmation(filter: filter, count: retries.count, token: token)))
        }
        console.post("queues/retries/retry") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "retry.now", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            let (requested, done) =
                if let token = form["token"] {
                    try await retryMatching(token: token, confirmed: form["confirm"], session: session, address: context.clientAddress)
                } else {
                    try await retrySelected(form.all("id"), session: session, address: context.clientAddress)
                }
            if !ConsolePage.wantsHTML(request) { return ConsolePage.json(["action": "retry-now", "requested": requested, "done": done]) }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Retrying now", session: session,
                    body: """
                        <h1>\(done) retr\(done == 1 ? "y" : "ies") due now</h1>
                        <p role="status">\(done) of the \(requested) asked for are due now and go out at a worker's next promotion\
                        \(done < requested ? "; the others were no longer waiting (already retried, cancelled or removed meanwhile)" : "").</p>
                        <p><a href="/console/queues?kind=retry">Back to the retries</a></p>
                        """))
        }
    }

    private func retryMatching(
        token: String, confirmed: String?, session: ConsoleSession, address: String
    ) async throws -> (requested: Int, done: Int) {
        let (confirmation, number) = try await routes.takeConfirmation(
            token, confirmed: confirmed, action: Self.countAction, as: Confirmation.self,
            session: session, noun: "retries", verb: "send now"
        ) { $0.retries.count }
        let target = confirmation.filter.summary + " (as counted: \(number) retries)"
        let done = try await routes.audited(Self.countAction, target: target, requested: number, session: session, address: address) {
            try await search.retryNow(matching: confirmation.filter, among: Set(confirmation.retries))
        }
        return (number, done)
    }

    private func retrySelected(_ references: [String], session: ConsoleSession, address: String) async throws -> (requested: Int, done: Int)
    {
        // `<partition>/<due>/<origin>`: where to find the retry, and which job it is.
        let selection = try DelayedReferences(
            references, partitions: Set(routes.backend.queues.map(\.configuration.partition)),
            most: ConsoleQueueRoutes.maxSelection, noun: "retries", form: "<partition>/<due>/<origin>", isKey: Self.isOrigin)
        let (wanted, requested, target) = (selection.byPartition, selection.count, DelayedReferences.target(references))
        // Another app's retry is left alone (a scoped operator's selection cannot reach it).
        let done = try await routes.audited("retry.now-selected", target: target, requested: requested, session: session, address: address)
        {
            try await search.retryNow(wanted, sees: { session.access.sees(app: $0) })
        }
        return (requested, done)
    }

    /// A job's origin as the queue writes it: a stream id (`<ms>-<seq>`) or, under fair
    /// scheduling, the admission's `w-<n>`; at most 64 bytes of letters, digits and `-`.
    static func isOrigin(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
    }
}
