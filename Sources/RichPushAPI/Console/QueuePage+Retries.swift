/// The queues page's "retry now": the answer of a count, with the form that retries exactly
/// those once the number is typed.
extension QueuePage {
    static func retryConfirmation(filter: DelayedFilter, count: Int, token: String?) -> HTML {
        guard let token, count > 0 else {
            return """
                <h1>Nothing to retry</h1><p role="status">No retry matches \(filter.summary).</p>
                <p><a href="/console/queues?\(HTML.query(filter.queryPairs))">Back</a></p>
                """
        }
        return """
            <h1>Retry \(count) now?</h1>
            <p role="status"><strong id="match-count">\(count)</strong> retr\(count == 1 ? "y" : "ies") match \(filter.summary) now.
            Retrying now acts on exactly these jobs: any that fail after this count keep their back-off, and this confirmation works once, for 10 minutes.</p>
            <form method="post" action="/console/queues/retries/retry" class="confirm">
            <input type="hidden" name="token" value="\(token)">
            <label for="confirm">Type \(count) to confirm</label>
            <input id="confirm" name="confirm" inputmode="numeric" pattern="[0-9]+" required autocomplete="off">
            <button type="submit">Retry \(count) now</button>
            </form>
            <p><a href="/console/queues?\(HTML.query(filter.queryPairs))">Back</a></p>
            """
    }
}
