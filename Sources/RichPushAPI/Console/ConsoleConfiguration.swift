/// How `richpush api` serves the operator's console (`/console`, docs/console.md).
package struct ConsoleConfiguration: Sendable {
    /// When the session cookie carries `Secure`.
    package enum SecureCookie: String, Sendable, CaseIterable {
        /// When the request came over TLS as a trusted proxy says (`X-Forwarded-Proto: https`
        /// from a `--trusted-proxies` peer): the API itself speaks no TLS.
        case auto
        /// Always (the console is only ever reached over TLS).
        case always
    }

    /// Refuses every action (everything but signing in and out) with 403 `console_read_only`.
    package var readOnly = false
    /// A session ends this long after sign-in, whatever happens.
    package var sessionLifetime: Duration = .seconds(8 * 3600)
    package var secureCookie: SecureCookie = .auto
    /// A bulk action's confirmation is valid this long after the count.
    package var confirmationLifetime: Duration = .seconds(600)
    /// How often the overview's live stream sends the numbers.
    package var liveInterval: Duration = .seconds(1)
    /// A live stream is closed after this many events, five minutes at one a second (the browser
    /// reconnects at once, and the session is checked again).
    package var liveStreamEvents = 300
    /// Live streams one replica serves at once; more get 503 + `Retry-After` (the page keeps its
    /// numbers and the browser tries again).
    package var maxLiveStreams = 64
    /// Scheduled, retrying and dead jobs read per partition (each kind) to count them by app.
    package var parkedScanLimit = 100_000
    /// The live stream reads those (the costlier part of the overview) once per this many events.
    package var parkedEvery = 5
    /// Dead letters one list page reads per partition looking for matches.
    package var listScanLimit = 50_000

    package init() {}
}
