import RichPushQueue

/// The dead letters page: the filter, the newest matches with checkboxes, and the actions
/// (replay or purge the selected ones; count all that match, then confirm that number). A viewer, or
/// anyone while the console is read-only, gets the list without a button or checkbox.
struct DeadLetterPage {
    let filter: DeadLetterFilter
    let found: [DeadLetterSearch.Found]
    let complete: Bool
    /// Where the next (older) page starts, if there is one.
    let next: DeadLetterSearch.Found.Position?
    let canAct: Bool

    var html: HTML {
        let rows: [HTML] = found.map { item in
            let select: HTML =
                canAct
                ? "<td><input type=\"checkbox\" name=\"id\" value=\"\(item.reference)\" form=\"selected\" aria-label=\"Select \(item.reference)\"></td>"
                : ""
            return """
                <tr>\(select)<td><code>\(item.reference)</code></td><td>\(DeadLetterFilter.app(of: item.letter))</td><td>\(item.letter.job?.type ?? "?")</td>\
                <td>\(ConsolePage.time(item.at))</td><td class="wrap">\(item.letter.undecodable.map { "undecodable: \($0); " } ?? "")\(Self.platforms(item.letter.job))\(item.letter.error)</td></tr>
                """
        }
        let columns: HTML = canAct ? #"<th scope="col"><input type="checkbox" id="select-all" aria-label="Select all shown"></th>"# : ""
        let more: HTML =
            complete
            ? "" : "<p class=\"note\">Only the newest part of a long list was searched for this page; counting searches them all.</p>"
        let actions: HTML =
            canAct
            ? """
            <div class="actions">
            <form method="post" action="/console/dead-letters/replay" id="selected"><button type="submit">Replay selected</button>
            <button type="submit" formaction="/console/dead-letters/purge" class="danger">Purge selected</button></form>
            <form method="post" action="/console/dead-letters/count">\(Self.hiddenFields(filter))<button type="submit" name="action" value="replay">Replay all that match…</button>
            <button type="submit" name="action" value="purge" class="danger">Purge all that match…</button></form>
            </div>
            """ : ""
        return """
            <h1>Dead letters</h1>
            <form method="get" action="/console/dead-letters" class="filter" role="search">
            <label for="f-app">App</label><input id="f-app" name="app" maxlength="32" value="\(filter.app ?? "")">
            <label for="f-platform">Platform</label><select id="f-platform" name="platform">\(ConsoleListFilter.platformOptions(selected: filter.platform))</select>
            <label for="f-reason">Reason</label><input id="f-reason" name="reason" maxlength="200" value="\(filter.reason ?? "")">
            <label for="f-text">Text</label><input id="f-text" name="text" maxlength="200" value="\(filter.text ?? "")">
            <label for="f-from">From (UTC)</label><input id="f-from" name="from" maxlength="40" placeholder="-1h or 2026-11-26T17:00:00Z" value="\(filter.from.map(ConsolePage.time) ?? "")">
            <label for="f-to">To (UTC)</label><input id="f-to" name="to" maxlength="40" value="\(filter.to.map(ConsolePage.time) ?? "")">
            <button type="submit">Filter</button>
            </form>
            <p>Matching: \(filter.summary). \(found.count) shown, newest first.</p>
            \(more)
            \(actions)
            <div class="scroll"><table id="dead-letters"><thead><tr>\(columns)<th scope="col">Id</th><th scope="col">App</th><th scope="col">Type</th>\
            <th scope="col">Died (UTC)</th><th scope="col">Error</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="6">No dead letter matches.</td></tr>"#] : rows)</tbody></table></div>
            \(olderLink)
            """
    }

    /// The next page's link: the same filter, older than the last one shown.
    private var olderLink: HTML {
        guard let next else { return "" }
        return
            "<p><a id=\"older-page\" href=\"/console/dead-letters?\(HTML.query(filter.queryPairs + [("cursor", next.text)]))\">Older \(ConsoleDeadLetterRoutes.pageSize) →</a></p>"
    }

    /// `[apns, fcm] `: the platforms whose pushes failed in the job's last attempt, if it named any.
    static func platforms(_ job: Job?) -> HTML {
        guard let platforms = job?.failedOn, !platforms.isEmpty else { return "" }
        return "[\(platforms.joined(separator: ", "))] "
    }

    static func hiddenFields(_ filter: DeadLetterFilter) -> HTML {
        let fields: [HTML] = filter.queryPairs.filter { !$0.1.isEmpty }.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\($0.1)\">" }
        return "\(fields)"
    }

    /// The count's answer: the exact number, and a form that replays (or purges) exactly those
    /// once that number is typed in.
    static func confirmation(_ action: DeadLetterAction, filter: DeadLetterFilter, count: Int, token: String?) -> HTML {
        guard let token, count > 0 else {
            return """
                <h1>Nothing to \(action.rawValue)</h1><p role="status">No dead letter matches \(filter.summary).</p>
                <p><a href="/console/dead-letters?\(HTML.query(filter.queryPairs))">Back</a></p>
                """
        }
        let warning: HTML = action == .purge ? "<p class=\"error\">Purged dead letters are deleted for good.</p>" : ""
        return """
            <h1>\(action.verb) \(count) dead letter\(count == 1 ? "" : "s")?</h1>
            <p role="status"><strong id="match-count">\(count)</strong> dead letter\(count == 1 ? "" : "s") match \(filter.summary) now.
            \(action.verb) acts on exactly these: any that die after this count are left alone, and this confirmation works once, for 10 minutes.</p>
            \(warning)
            <form method="post" action="/console/dead-letters/\(action.rawValue)" class="confirm">
            <input type="hidden" name="token" value="\(token)">
            <label for="confirm">Type \(count) to confirm</label>
            <input id="confirm" name="confirm" inputmode="numeric" pattern="[0-9]+" required autocomplete="off">
            <button type="submit"\(action == .purge ? " class=\"danger\"" as HTML : "")>\(action.verb) \(count)</button>
            </form>
            <p><a href="/console/dead-letters?\(HTML.query(filter.queryPairs))">Cancel</a></p>
            """
    }
}
