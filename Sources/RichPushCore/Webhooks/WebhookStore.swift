/// Where webhooks, their delivery attempts and their dead letters live (Redis in production).
package protocol WebhookStore: Sendable {
    /// Stores a new webhook; false when its owner already has ``Webhook/maxPerUser``.
    func create(_ webhook: Webhook) async throws -> Bool
    func webhook(id: String) async throws -> Webhook?
    /// The webhooks of one owner, or of everyone.
    func webhooks(owner: String?) async throws -> [Webhook]
    /// Deletes a webhook with its attempts and dead letters; false if there was none.
    func delete(id: String) async throws -> Bool
    /// The newest delivery attempts, newest first.
    func attempts(webhook: String, limit: Int) async throws -> [WebhookAttempt]
    /// Deliveries that failed for the whole retry window, newest first.
    func deadLetters(webhook: String, limit: Int) async throws -> [WebhookDeadLetter]
    /// Puts every dead letter of a webhook back in line for delivery now; returns how many.
    func replayDeadLetters(webhook: String) async throws -> Int
}

/// One POST of a delivery (its first or a retry), as the attempts route lists it.
package struct WebhookAttempt: Sendable, Hashable, Codable {
    package enum Outcome: String, Sendable, Hashable, Codable {
        /// The receiver answered 2xx: done.
        case delivered
        /// It failed; the delivery is tried again later.
        case retrying
        /// It failed and the retry window is over: the delivery is in the dead letters.
        case dead
    }

    package var deliveryId: String
    /// 1 for the first POST.
    package var attempt: Int
    /// ISO 8601, UTC.
    package var at: String
    /// The receiver's HTTP status; nil when no answer came (refused, timed out).
    package var status: Int?
    package var durationMs: Int
    package var events: Int
    package var outcome: Outcome
    package var error: String?

    package init(deliveryId: String, attempt: Int, at: String, status: Int?, durationMs: Int, events: Int, outcome: Outcome, error: String?)
    {
        self.deliveryId = deliveryId
        self.attempt = attempt
        self.at = at
        self.status = status
        self.durationMs = durationMs
        self.events = events
        self.outcome = outcome
        self.error = error
    }
}

/// A delivery given up on, kept with its body so nothing is lost silently: it can be read and replayed.
package struct WebhookDeadLetter: Sendable, Hashable, Codable {
    package var deliveryId: String
    package var attempts: Int
    package var firstAttemptAt: String
    package var lastAttemptAt: String
    package var lastError: String
    package var events: Int
    /// The JSON body that was POSTed.
    package var body: String

    package init(
        deliveryId: String, attempts: Int, firstAttemptAt: String, lastAttemptAt: String, lastError: String, events: Int, body: String
    ) {
        self.deliveryId = deliveryId
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.lastError = lastError
        self.events = events
        self.body = body
    }
}
