import RichPushCore
import RichPushQueue

/// The overview's numbers: what `richpush stats` reads (``QueueStats/snapshot(_:perApp:)``: one
/// pipelined read per partition, per-app numbers by fair scheduling's per-app script), cut to the
/// apps the user sees.
struct ConsoleOverview: Sendable {
    struct App: Sendable {
        let app: String
        let stats: AppQueueStats
        /// The queue's apps its numbers were read from (the queue reports busy ones only:
        /// work waiting or in flight); none for an app listed for its parked jobs only, whose
        /// numbers here are zeros, not its totals. The default app has two: its own and `_`.
        var queueApps: Set<String> = []
        var scheduled = 0
        var retrying = 0
        var dead = 0
        /// Jobs per second since the stream's previous snapshot (nil: none yet).
        var rates: Rates?
    }

    /// Jobs (a fan-out batch is one job, not one push) done, sent back to retry and
    /// dead-lettered per second, and pushes failed per second by reason code (the codes that
    /// moved): the change of the queue's per-app totals between two snapshots.
    struct Rates: Sendable, Equatable {
        let done: Double
        let retried: Double
        let deadLettered: Double
        var failedByReason: [String: Double] = [:]
        /// Pushes (not jobs) the platforms accepted per second.
        var sent: Double = 0
    }

    struct Worker: Sendable {
        let name: String
        let pending: Int
        /// Since it last read or claimed: its heartbeat (a worker reads at least every block time).
        let idleMilliseconds: Int
        let processed: Int
    }

    var apps: [App]
    let workers: [Worker]
    /// Deployment-wide (per app they are not counted yet; docs/console.md).
    let delayed: Int
    let deadLetters: Int
    let pending: Int
    let lag: Int
    /// Every app's total is shown only to a user who sees every app.
    let allApps: Bool
    /// False when the parked jobs were too many to read whole (the numbers are at least these).
    let parkedComplete: Bool

    /// The numbers now; `parked`: the per-app scheduled, retrying and dead (``ParkedJobs``),
    /// which the live stream reads less often than the rest.
    static func read(_ queues: [JobQueue], access: ConsoleAccess, parked: ParkedJobs) async throws -> ConsoleOverview {
        let stats = try await QueueStats.snapshot(queues, perApp: true).total
        // Jobs that name no app (`_`) are the default app's: one row.
        func app(_ queueApp: String) -> String { queueApp == JobRequest.sharedApp ? AppID.default.rawValue : queueApp }
        var busy: [String: AppQueueStats] = [:]
        var queueApps: [String: Set<String>] = [:]
        for (queueApp, numbers) in stats.apps {
            busy[app(queueApp)] = busy[app(queueApp)].map { $0.adding(numbers) } ?? numbers
            queueApps[app(queueApp), default: []].insert(queueApp)
        }
        func byApp(_ counts: [String: Int]) -> [String: Int] { Dictionary(counts.map { (app($0.key), $0.value) }, uniquingKeysWith: +) }
        let scheduled = byApp(parked.scheduled), retrying = byApp(parked.retrying), dead = byApp(parked.dead)
        let names = Set(busy.keys).union(scheduled.keys).union(retrying.keys).union(dead.keys)
        let apps = names.filter { access.sees(app: $0) }.sorted().map { name in
            App(
                app: name, stats: busy[name] ?? AppQueueStats(), queueApps: queueApps[name] ?? [], scheduled: scheduled[name] ?? 0,
                retrying: retrying[name] ?? 0, dead: dead[name] ?? 0)
        }
        let workers = stats.consumers.map {
            Worker(
                name: $0.name, pending: $0.pending, idleMilliseconds: $0.idleMilliseconds,
                processed: stats.processedByConsumer[$0.name] ?? 0)
        }
        return ConsoleOverview(
            apps: apps, workers: workers, delayed: stats.delayed, deadLetters: stats.deadLetters, pending: stats.pending,
            lag: stats.lag, allApps: access.apps == nil, parkedComplete: parked.complete)
    }

    /// The JSON the live stream and `GET /console/overview.json` send.
    var json: [String: Any] {
        var object: [String: Any] = [
            "apps": apps.map(\.json),
            "parkedComplete": parkedComplete,
            "workers": workers.map {
                ["name": $0.name, "pending": $0.pending, "idleMs": $0.idleMilliseconds, "processed": $0.processed] as [String: Any]
            },
        ]
        if allApps {
            object["totals"] = ["scheduledOrRetrying": delayed, "deadLetters": deadLetters, "pending": pending, "lag": lag]
        }
        return object
    }

    /// The overview's page body; the script replaces the tables' rows as numbers arrive.
    var html: HTML {
        let appRows: [HTML] = apps.map { app in
            "<tr><th scope=\"row\">\(app.app)\(app.stats.paused ? " · paused" : "")</th><td>\(app.stats.waiting)</td><td>\(ConsolePage.age(app.stats.oldestWaitingAgeMilliseconds))</td><td>\(app.stats.inFlight)</td><td>\(app.stats.done)</td><td>\(app.scheduled)</td><td>\(app.retrying)</td><td>\(app.dead)</td>\(Self.rateCells(app.rates))</tr>"
        }
        let workerRows: [HTML] = workers.map { worker in
            "<tr><th scope=\"row\">\(worker.name)</th><td>\(worker.pending)</td><td>\(worker.processed)</td><td>\(ConsolePage.age(worker.idleMilliseconds)) ago</td></tr>"
        }
        let totals: HTML =
            allApps
            ? """
            <section aria-labelledby="totals"><h2 id="totals">Deployment</h2><dl class="totals">
            <div><dt>Scheduled or retrying</dt><dd data-total="scheduledOrRetrying">\(delayed)</dd></div>
            <div><dt>Dead letters</dt><dd data-total="deadLetters"><a href="/console/dead-letters">\(deadLetters)</a></dd></div>
            <div><dt>In flight</dt><dd data-total="pending">\(pending)</dd></div>
            <div><dt>Not yet read</dt><dd data-total="lag">\(lag)</dd></div></dl></section>
            """ : ""
        return """
            <h1>Overview</h1>
            <p class="live" id="live" role="status" aria-live="polite">Numbers as of page load.</p>
            <p class="note">Rates are per second between the live updates: pushes the platforms accepted (sent/s), jobs (done, retried, dead-lettered: a fan-out batch is one job, not one push), and failed pushes by the platform's reason (the 3 fastest, the rest summed). They appear from the second update.</p>
            <p>Testing Web Push? <a href="/device">The browser device</a> (<code>/device</code>) registers this browser as a device of an app and shows the pushes it receives.</p>
            <section aria-labelledby="apps-title"><h2 id="apps-title">Apps with work</h2>
            \(parkedComplete ? "" : "<p class=\"note\">Too many scheduled, retrying or dead jobs to count them all: the numbers are at least these.</p>" as HTML)
            <div class="scroll"><table id="apps"><thead><tr><th scope="col">App</th><th scope="col">Waiting</th><th scope="col">Oldest waiting</th><th scope="col">In flight</th><th scope="col">Done</th><th scope="col">Scheduled</th><th scope="col">Retrying</th><th scope="col">Dead</th><th scope="col">Sent/s</th><th scope="col">Done/s</th><th scope="col">Retried/s</th><th scope="col">Dead-lettered/s</th><th scope="col">Failed/s by reason</th></tr></thead>
            <tbody>\(appRows.isEmpty ? [#"<tr class="empty"><td colspan="13">No app has work waiting, in flight, scheduled, retrying or dead.</td></tr>"#] : appRows)</tbody></table></div></section>
            \(totals)
            <section aria-labelledby="workers-title"><h2 id="workers-title">Workers</h2>
            <div class="scroll"><table id="workers"><thead><tr><th scope="col">Worker</th><th scope="col">In flight</th><th scope="col">Processed</th><th scope="col">Last heard</th></tr></thead>
            <tbody>\(workerRows.isEmpty ? [#"<tr class="empty"><td colspan="4">No worker has joined the queue.</td></tr>"#] : workerRows)</tbody></table></div>
            \(workersChart)</section>
            """
    }
}
