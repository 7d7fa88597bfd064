import RichPushCore

/// The webhooks page: an app's webhooks (owner, where they POST, the events, never the secret);
/// for the one chosen, its recent attempts and its dead letters, with a replay button for an operator.
struct WebhookPage {
    let app: String
    let webhooks: [Webhook]
    let detail: (Webhook, [WebhookAttempt], [WebhookDeadLetter])?
    let canAct: Bool

    var html: HTML {
        let rows: [HTML] = webhooks.map { hook in
            """
            <tr><th scope="row"><a href="/console/webhooks?\(HTML.query([("app", app), ("id", hook.id)]))"><code>\(hook.id)</code></a></th>\
            <td>\(hook.owner)\(hook.allUsers ? " (all users)" : "")</td><td class="wrap"><code>\(ConsoleWebhookRoutes.shownURL(hook.url))</code></td>\
            <td class="wrap">\(hook.events.map(\.rawValue).sorted().joined(separator: ", "))</td><td>\(hook.description)</td><td>\(ConsolePage.time(hook.createdAt))</td></tr>
            """
        }
        return """
            <h1>Webhooks</h1>
            <form method="get" action="/console/webhooks" class="filter" role="search">
            <label for="w-app">App</label><input id="w-app" name="app" maxlength="32" value="\(app)">
            <button type="submit">Show</button>
            </form>
            <p>Secrets are never shown; a URL's user, password and query are hidden.</p>
            <div class="scroll"><table id="webhooks"><thead><tr><th scope="col">Webhook</th><th scope="col">Owner</th><th scope="col">URL</th>\
            <th scope="col">Events</th><th scope="col">Description</th><th scope="col">Created (UTC)</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="6">No webhook in this app.</td></tr>"#] : rows)</tbody></table></div>
            \(detailHTML)
            """
    }

    private var detailHTML: HTML {
        guard let (hook, attempts, dead) = detail else { return "" }
        let attemptRows: [HTML] = attempts.map { attempt in
            """
            <tr><td>\(attempt.at)</td><td><code>\(attempt.deliveryId)</code></td><td>\(attempt.attempt)</td><td>\(attempt.status.map(String.init) ?? "-")</td>\
            <td>\(attempt.durationMs) ms</td><td>\(attempt.events)</td><td>\(attempt.outcome.rawValue)</td><td class="wrap">\(attempt.error ?? "")</td></tr>
            """
        }
        let deadRows: [HTML] = dead.map { letter in
            """
            <tr><td><code>\(letter.deliveryId)</code></td><td>\(letter.attempts)</td><td>\(letter.firstAttemptAt)</td><td>\(letter.lastAttemptAt)</td>\
            <td>\(letter.events)</td><td class="wrap">\(letter.lastError)</td></tr>
            """
        }
        let replay: HTML =
            canAct && !dead.isEmpty
            ? """
            <form method="post" action="/console/webhooks/replay" class="actions"><input type="hidden" name="app" value="\(app)">\
            <input type="hidden" name="id" value="\(hook.id)"><button type="submit">Replay every dead delivery</button></form>
            """ : ""
        return """
            <h2>Webhook <code>\(hook.id)</code></h2>
            <h3>Recent attempts</h3>
            <div class="scroll"><table id="attempts"><thead><tr><th scope="col">At (UTC)</th><th scope="col">Delivery</th><th scope="col">Attempt</th>\
            <th scope="col">Status</th><th scope="col">Took</th><th scope="col">Events</th><th scope="col">Outcome</th><th scope="col">Error</th></tr></thead>
            <tbody>\(attemptRows.isEmpty ? [#"<tr class="empty"><td colspan="8">No attempt recorded.</td></tr>"#] : attemptRows)</tbody></table></div>
            <h3>Dead letters</h3>
            \(replay)
            <div class="scroll"><table id="webhook-dead"><thead><tr><th scope="col">Delivery</th><th scope="col">Attempts</th><th scope="col">First (UTC)</th>\
            <th scope="col">Last (UTC)</th><th scope="col">Events</th><th scope="col">Last error</th></tr></thead>
            <tbody>\(deadRows.isEmpty ? [#"<tr class="empty"><td colspan="6">No dead delivery.</td></tr>"#] : deadRows)</tbody></table></div>
            """
    }
}
