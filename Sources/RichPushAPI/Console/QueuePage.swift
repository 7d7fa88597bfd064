/// The queues page: the apps paused and a pause or resume form; the filter; the next scheduled
/// sends and retries due, with checkboxes on the scheduled sends a cancel can stop; the actions
/// (cancel the selected ones; count all that match, then confirm that number); the next page's
/// link. A viewer, or anyone while the console is read-only, gets the lists without a form.
struct QueuePage {
    let filter: DelayedFilter
    let found: [DelayedSearch.Found]
    let next: DelayedSearch.Cursor?
    let complete: Bool
    let paused: [String]
    let canAct: Bool

    var html: HTML {
        let rows: [HTML] = found.map { item in
            let reference = item.notification.map { "\(item.partition)/\(item.job.due)/\($0)" }
            // A retry is selected for "retry now" (by its origin), a scheduled send for a cancel.
            let retry = item.job.isRetry ? item.job.job.map { "\(item.partition)/\(item.job.due)/\($0.origin)" } : nil
            let select: HTML =
                !canAct
                ? ""
                : reference.map {
                    "<td><input type=\"checkbox\" name=\"id\" value=\"\($0)\" form=\"selected\" aria-label=\"Select \($0)\"></td>"
                } ?? retry.map {
                    "<td><input type=\"checkbox\" name=\"id\" value=\"\($0)\" form=\"retries-selected\" aria-label=\"Select retry \($0)\"></td>"
                } ?? "<td></td>"
            let job = item.job.job
            return """
                <tr>\(select)<td>\(ConsolePage.time(item.job.due))</td><td>\(item.app)</td><td>\(item.job.isRetry ? "retry" : "scheduled")</td>\
                <td><code>\(item.notification ?? job.map { String(decoding: $0.payload.prefix(60), as: UTF8.self) } ?? "?")</code></td>\
                <td>\(job?.type ?? "?")</td><td>\(job?.attempt ?? 0)</td><td class="wrap">\(DeadLetterPage.platforms(job))\(job?.lastError ?? "")</td></tr>
                """
        }
        let columns: HTML = canAct ? #"<th scope="col"><input type="checkbox" id="select-all" aria-label="Select all shown"></th>"# : ""
        let more: HTML =
            complete ? "" : "<p class=\"note\">Only part of a long queue was searched for this page; counting searches it all.</p>"
        let nextLink: HTML =
            next.map {
                "<p><a id=\"next-page\" href=\"/console/queues?\(HTML.query(filter.queryPairs + [("cursor", $0.text)]))\">Next \(ConsoleQueueRoutes.pageSize) due</a></p>"
            } ?? ""
        let actions: HTML =
            canAct
            ? """
            <div class="actions">
            <form method="post" action="/console/queues/cancel" id="selected"><button type="submit" class="danger">Cancel selected</button></form>
            <form method="post" action="/console/queues/count">\(Self.hiddenFields(filter))<button type="submit" class="danger">Cancel all scheduled sends that match…</button></form>
            <form method="post" action="/console/queues/retries/retry" id="retries-selected"><button type="submit">Retry selected now</button></form>
            <form method="post" action="/console/queues/retries/count">\(Self.hiddenFields(filter))<button type="submit">Retry all retries that match now…</button></form>
            </div>
            """ : ""
        let pausedList: HTML =
            paused.isEmpty ? "<p>No app is paused.</p>" : "<p>Paused: <span id=\"paused\">\(paused.joined(separator: ", "))</span>.</p>"
        let pauseForm: HTML =
            canAct
            ? """
            <form method="post" action="/console/queues/pause" class="filter">
            <label for="p-app">App</label><input id="p-app" name="app" maxlength="32" required value="\(filter.app ?? "")">
            <button type="submit" class="danger">Pause sending</button><button type="submit" formaction="/console/queues/resume">Resume sending</button>
            </form>
            """ : ""
        let kinds: [HTML] = DelayedFilter.Kind.allCases.map {
            "<option value=\"\($0.rawValue)\"\(filter.kind == $0 ? " selected" : "" as HTML)>\($0.rawValue)</option>"
        }
        return """
            <h1>Queues</h1>
            <section aria-labelledby="pause-title"><h2 id="pause-title">Pause an app</h2>
            <p>A paused app's jobs wait in its lanes, none lost nor dead-lettered, and no worker takes them; other apps go on. Jobs already taken finish.</p>
            \(pausedList)
            \(pauseForm)</section>
            <section aria-labelledby="delayed-title"><h2 id="delayed-title">Scheduled sends and retries</h2>
            <form method="get" action="/console/queues" class="filter" role="search">
            <label for="f-app">App</label><input id="f-app" name="app" maxlength="32" value="\(filter.app ?? "")">
            <label for="f-kind">Kind</label><select id="f-kind" name="kind">\(kinds)</select>
            <label for="f-platform">Platform</label><select id="f-platform" name="platform">\(ConsoleListFilter.platformOptions(selected: filter.platform))</select>
            <label for="f-text">Text</label><input id="f-text" name="text" maxlength="200" value="\(filter.text ?? "")">
            <label for="f-from">Due from (UTC)</label><input id="f-from" name="from" maxlength="40" placeholder="+1h or 2026-11-26T17:00:00Z" value="\(filter.from.map(ConsolePage.time) ?? "")">
            <label for="f-to">Due before (UTC)</label><input id="f-to" name="to" maxlength="40" value="\(filter.to.map(ConsolePage.time) ?? "")">
            <button type="submit">Filter</button>
            </form>
            <p>Matching: \(filter.summary). The next \(found.count) due shown.</p>
            \(more)
            \(actions)
            <div class="scroll"><table id="delayed"><thead><tr>\(columns)<th scope="col">Due (UTC)</th><th scope="col">App</th><th scope="col">Kind</th>\
            <th scope="col">Notification</th><th scope="col">Type</th><th scope="col">Attempt</th><th scope="col">Last error</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="8">Nothing scheduled or retrying matches.</td></tr>"#] : rows)</tbody></table></div>
            \(nextLink)</section>
            """
    }

    static func hiddenFields(_ filter: DelayedFilter) -> HTML {
        let fields: [HTML] = filter.queryPairs.filter { !$0.1.isEmpty }.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\($0.1)\">" }
        return "\(fields)"
    }

    /// The count's answer: the exact number, and a form that cancels exactly those once it is typed.
    static func confirmation(filter: DelayedFilter, count: Int, token: String?) -> HTML {
        guard let token, count > 0 else {
            return """
                <h1>Nothing to cancel</h1><p role="status">No scheduled send matches \(filter.summary).</p>
                <p><a href="/console/queues?\(HTML.query(filter.queryPairs))">Back</a></p>
                """
        }
        return """
            <h1>Cancel \(count) scheduled send\(count == 1 ? "" : "s")?</h1>
            <p role="status"><strong id="match-count">\(count)</strong> scheduled send\(count == 1 ? "" : "s") match \(filter.summary) now.
            The cancel acts on exactly these notifications: any scheduled after this count are left alone, and this confirmation works once, for 10 minutes.</p>
            <p class="error">A cancelled notification sends nothing; its status says cancelled, as after DELETE /api/notifications/{id}.</p>
            <form method="post" action="/console/queues/cancel" class="confirm">
            <input type="hidden" name="token" value="\(token)">
            <label for="confirm">Type \(count) to confirm</label>
            <input id="confirm" name="confirm" inputmode="numeric" pattern="[0-9]+" required autocomplete="off">
            <button type="submit" class="danger">Cancel \(count)</button>
            </form>
            <p><a href="/console/queues?\(HTML.query(filter.queryPairs))">Back</a></p>
            """
    }
}
