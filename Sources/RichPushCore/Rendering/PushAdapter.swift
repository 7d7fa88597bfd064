/// One push for one installation.
package struct OutgoingPush: Sendable, Hashable {
    /// The notification it carries (platforms derive their message id from it and the
    /// installation, so a retry keeps the id).
    package var notification: Int
    package var installation: Installation
    package var rendered: RenderedPush

    package init(notification: Int, installation: Installation, rendered: RenderedPush) {
        self.notification = notification
        self.installation = installation
        self.rendered = rendered
    }
}

/// What the platform said about one push.
package enum PushOutcome: Sendable, Hashable {
    /// Handed over; `adapterID` is the platform's id for it (apns-id, message id).
    case sent(adapterID: String)
    /// The device is offline; the platform keeps the push for it for a while (per collapse id).
    case held(adapterID: String)
    /// The token is no longer valid: remove the installation, never retry.
    case invalidToken(reason: String)
    /// Failed; `retryable` says whether trying again later may work.
    case failed(reason: String, retryable: Bool)
    /// Failed retryably, and the platform said when to try again (a 5xx with `Retry-After`): the
    /// retry waits at least `after` and spends an attempt, as any failure does.
    case failedRetryAfter(reason: String, after: Duration)
    /// Not sent because the provider pushed back (a quota used up, `429` with `Retry-After`, a
    /// hold in force across the fleet): not the push's fault. It goes again after `after` without
    /// spending one of the job's attempts, however long the provider holds.
    case deferred(reason: String, after: Duration)
    /// Not sent, or refused, because the provider asked to slow down for this device's token or
    /// subscription (a 429 naming it): deferred as above, and every worker holds its next pushes
    /// to that device, whatever their notification, until `after` has passed.
    case deviceDeferred(reason: String, after: Duration)
}

/// Sends rendered pushes to a platform (a simulated hub, APNs, …), in batches.
package protocol PushAdapter: Sendable {
    /// A name for logs and metrics (`simulated`, `apns`).
    var name: String { get }
    /// Sends the pushes and returns one outcome each, in order. Throws only when nothing could be
    /// sent at all (the platform unreachable); the job is then retried.
    func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome]
    /// The name of the adapter that carries `platform`'s pushes, for per-platform metrics (an
    /// adapter routing by platform answers for each route; others are their own `name`).
    func name(for platform: Platform) -> String
    /// Has what `send` needs before its first request (a provider's auth token, which may mean
    /// waiting for another worker's exchange), so the checks made right before `send` (the
    /// fleet's dead tokens) are not made seconds before its requests go out. Never fails: what it
    /// could not get, `send` reports.
    func prepare() async
}

extension PushAdapter {
    package func name(for platform: Platform) -> String { name }
    package func prepare() async {}
}
