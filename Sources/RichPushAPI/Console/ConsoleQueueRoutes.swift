import Foundation
import Hummingbird
import RichPushApps
import RichPushCore
import RichPushQueue

/// `/console/queues`: the scheduled sends and retries waiting in the queue's delayed set, per app,
/// filtered and paged (the next 50 due, then a cursor); cancelling scheduled sends (the selected
/// ones, or all that match in two steps as for dead letters: count, then confirm that number);
/// and pausing or resuming an app's sending. Every action needs an operator, passes
/// ``ConsoleGuard`` and is audited before and after.
struct ConsoleQueueRoutes: Sendable {
    let routes: ConsoleRoutes

    static let pageSize = 50
    static let maxSelection = 500

    var search: DelayedSearch { DelayedSearch(queues: routes.backend.queues) }

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("queues") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let filter = try DelayedFilter(form, access: session.access)
            let cursor = try form["cursor"].map(DelayedSearch.Cursor.init)
            let (found, next, complete) = try await search.page(
                filter, from: cursor, limit: Self.pageSize, scanLimit: routes.configuration.listScanLimit)
            let paused = Set(
                try await JobQueue.pausedApps(in: routes.backend.queues).map {
                    $0 == JobRequest.sharedApp ? AppID.default.rawValue : $0
                }
            )
            .filter { session.access.sees(app: $0) }.sorted()
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "jobs": found.map(Self.json), "next": next?.text ?? NSNull(), "complete": complete, "filter": filter.summary,
                    "paused": paused,
                ])
            }
            let page = QueuePage(
                filter: filter, found: found, next: next, complete: complete, paused: paused,
                canAct: session.access.role >= .operator && !routes.configuration.readOnly)
            return ConsolePage.response(
                ConsolePage.layout(title: "Queues", session: session, readOnly: routes.configuration.readOnly, body: page.html))
        }
        console.post("queues/count") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "scheduled.count", needs: .operator)
            let filter = try DelayedFilter(try await ConsoleForm.body(of: request), access: session.access)
            let notifications = try await search.count(filter)
            let token = try await routes.issueConfirmation(
                Confirmation(filter: filter, notifications: notifications), action: "scheduled.cancel-matching",
                count: notifications.count, session: session)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "count": notifications.count, "token": token.map { $0 as Any } ?? NSNull(), "filter": filter.summary,
                    "action": "cancel",
                ])
            }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Confirm", session: session,
                    body: QueuePage.confirmation(filter: filter, count: notifications.count, token: token)))
        }
        console.post("queues/cancel") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "scheduled.cancel", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            if let token = form["token"] {
                return try await cancelMatching(
                    token: token, confirmed: form["confirm"], request: request, context: context, session: session)
            }
            let (requested, done) = try await cancelSelected(form.all("id"), session: session, address: context.clientAddress)
            if !ConsolePage.wantsHTML(request) { return ConsolePage.json(["action": "cancel", "requested": requested, "done": done]) }
            return ConsolePage.response(
                ConsolePage.layout(title: "Cancelled", session: session, body: Self.result(done: done, requested: requested, level: 1)))
        }
        for paused in [true, false] {
            console.post(paused ? "queues/pause" : "queues/resume") { request, context in
                try await setPaused(paused, request, context)
            }
        }
    }

    /// What a cancel's confirmation binds: the filter and the notifications counted (`app:id`).
    struct Confirmation: Codable, Sendable {
        let filter: DelayedFilter
        let notifications: [String]
    }

    /// What a cancel did, as the page says it: a heading of `level` and the numbers.
    static func result(done: Int, requested: Int, level: Int) -> HTML {
        let heading = HTML(trusted: "h\(level)")
        return """
            <\(heading) id="result">Cancelled \(ConsolePage.number(done)) scheduled send\(done == 1 ? "" : "s")</\(heading)>
            <p role="status">\(ConsolePage.number(done)) of the \(ConsolePage.number(requested)) asked for were cancelled\(done < requested ? "; the others were no longer waiting (sent, cancelled or removed meanwhile)" : "").</p>
            <p><a href="/console/queues">Back to the queues</a></p>
            """
    }

    /// All that match: the confirmation is taken and checked, then the counted notifications
    /// still waiting are cancelled, answering as it goes (``ConsoleBulkAction``).
    private func cancelMatching(
        token: String, confirmed: String?, request: Request, context: APIRequestContext, session: ConsoleSession
    ) async throws -> Response {
        let (confirmation, number) = try await routes.takeConfirmation(
            token, confirmed: confirmed, action: "scheduled.cancel-matching", as: Confirmation.self,
            session: session, noun: "scheduled sends", verb: "cancel"
        ) { $0.notifications.count }
        let target = confirmation.filter.summary + " (as counted: \(confirmation.notifications.count) notifications)"
        let wording = ConsoleBulkAction.Wording(
            title: "Cancelled", heading: "Cancelling \(ConsolePage.number(number)) scheduled send\(number == 1 ? "" : "s")",
            line: { "<li>Cancelled \(ConsolePage.number($0)) of \(ConsolePage.number(number))</li>" },
            result: { Self.result(done: $0, requested: number, level: 2) })
        let bulk = ConsoleBulkAction(
            action: "cancel", requested: number, wording: wording,
            audit: routes.auditTrail(
                "scheduled.cancel-matching", target: target, requested: number, session: session, address: context.clientAddress))
        return try await bulk.respond(.init(request), session: session, context: context) { [self] progress in
            let matching = try await search.matching(confirmation.filter, among: Set(confirmation.notifications))
            return try await cancel(matching) { await progress(min($0, number)) }
        }
    }

    private func cancelSelected(
        _ references: [String], session: ConsoleSession, address: String
    ) async throws -> (requested: Int, done: Int) {
        // `<partition>/<due>/<app>:<id>`: where to find the job, and the notification it sends.
        let selection = try DelayedReferences(
            references, partitions: Set(routes.backend.queues.map(\.configuration.partition)), most: Self.maxSelection,
            noun: "scheduled sends", form: "<partition>/<due>/<app>:<id>"
        ) { key in
            key.split(separator: ":").first.map { AppID.problem(String($0)) == nil } ?? false
        }
        for key in selection.byPartition.values.flatMap({ $0.values.flatMap { $0 } }) {
            let app = String(key.prefix { $0 != ":" })
            guard session.access.sees(app: app) else {
                throw APIError(
                    .forbidden, code: "console_forbidden", message: "scheduled send \(key.prefix(80)) is of an app you do not see")
            }
        }
        let wanted = selection.byPartition
        let requested = selection.count
        let target = DelayedReferences.target(references)
        let done = try await routes.audited(
            "scheduled.cancel-selected", target: target, requested: requested, session: session, address: address
        ) {
            var matching: [(queue: JobQueue, found: [DelayedSearch.Found])] = []
            for queue in routes.backend.queues {
                guard let byDue = wanted[queue.configuration.partition] else { continue }
                let jobs = try await queue.delayedJobs(dueAt: byDue.keys.sorted())
                let found = jobs.map { DelayedSearch.Found(partition: queue.configuration.partition, job: $0) }.filter { item in
                    item.notification.map { byDue[item.job.due]?.contains($0) == true } ?? false
                }
                matching.append((queue, found))
            }
            return try await cancel(matching)
        }
        return (requested, done)
    }

    /// Cancels each found scheduled send as `DELETE /api/notifications/{id}` does (the store's
    /// cancel script: its status says cancelled and its webhook fires), in the store's batches
    /// (``RedisNotificationStore/cancel(ids:)``: pipelines of 500 per app and partition, not a round
    /// trip each), then takes the jobs of those now cancelled out of the delayed set (one call per
    /// partition: they would send nothing when due). A cancel that failed leaves its job; the
    /// first such error is thrown once the others' jobs are removed (the audit says failed).
    /// `progress` gets the running total cancelled after each of the store's batches.
    private func cancel(
        _ matching: [(queue: JobQueue, found: [DelayedSearch.Found])], progress: (Int) async -> Void = { _ in }
    ) async throws -> Int {
        var done: Set<String> = []
        var cancelled = 0
        var failure: (any Error)?
        for (queue, found) in matching {
            var byApp: [AppID: [(id: Int, member: [UInt8])]] = [:]
            for item in found {
                guard let (app, id) = DelayedFilter.notification(of: item.job) else { continue }
                byApp[app, default: []].append((id, item.job.member))
            }
            var removable: [[UInt8]] = []
            for (app, items) in byApp {
                let outcomes = try await routes.backend.notifications(app).cancel(ids: items.map(\.id)) { count in
                    cancelled += count
                    await progress(cancelled)
                }
                for (item, outcome) in zip(items, outcomes) {
                    switch outcome {
                    case .success(.cancelled), .success(.alreadyCancelled):
                        done.insert("\(app.rawValue):\(item.id)")
                        removable.append(item.member)
                    case .success(.tooLate), .success(.notFound): continue
                    case .failure(let error): failure = failure ?? error
                    }
                }
            }
            _ = try await queue.removeDelayed(removable)
        }
        if let failure { throw failure }
        return done.count
    }

    private func setPaused(_ paused: Bool, _ request: Request, _ context: APIRequestContext) async throws -> Response {
        let session = try await routes.session(request)
        let action = paused ? "app.pause" : "app.resume"
        try await routes.authorizeChange(request, context: context, session: session, action: action, needs: .operator)
        let form = try await ConsoleForm.body(of: request)
        guard let text = form["app"], let app = AppID(validating: text) else {
            throw APIError.badRequest("app: \(form["app"].flatMap(AppID.problem) ?? "give the app's id")", code: "bad_app_id")
        }
        guard session.access.sees(app: app.rawValue) else {
            throw APIError(.forbidden, code: "console_forbidden", message: "you do not see app \(app.rawValue)")
        }
        guard routes.backend.queues.first?.configuration.scheduling != .fifo else {
            throw APIError(
                .conflict, code: "fifo_scheduling", message: "pausing needs fair scheduling: under fifo, jobs go straight into the stream")
        }
        // The default app's pause holds the jobs that name no app too (they count as its).
        let apps = app.isDefault ? [app.rawValue, JobRequest.sharedApp] : [app.rawValue]
        // Audited as asked and done per scope and partition (0 done: it already was). The app's
        // record first (a starting worker pauses it again in every partition), then the partitions.
        let changed = try await routes.audited(
            action, target: "app=\(app.rawValue)", requested: apps.count * routes.backend.queues.count,
            session: session, address: context.clientAddress
        ) {
            if let apps = routes.apps {
                guard try await apps.summary(id: app) != nil else {
                    throw APIError(.notFound, code: "app_not_found", message: "no app '\(app.rawValue)'")
                }
                _ = try await apps.update(id: app, change: AppChange(paused: paused))
            }
            return try await JobQueue.setPaused(paused, apps: apps, in: routes.backend.queues)
        }
        if !ConsolePage.wantsHTML(request) { return ConsolePage.json(["app": app.rawValue, "paused": paused, "changed": changed > 0]) }
        return ConsolePage.redirect(to: "/console/queues?" + HTML.query([("app", app.rawValue)]))
    }

    static func json(_ found: DelayedSearch.Found) -> [String: Any] {
        [
            "ref": found.notification.map { "\(found.partition)/\(found.job.due)/\($0)" } ?? NSNull(), "app": found.app,
            "due": found.job.due,
            "kind": found.job.isRetry ? "retry" : "scheduled", "type": found.job.job?.type ?? NSNull(),
            "attempt": found.job.job?.attempt ?? 0,
            "error": found.job.job?.lastError ?? NSNull(), "notification": found.notification ?? NSNull(),
            "platforms": found.job.job?.failedOn ?? [],
        ]
    }
}
