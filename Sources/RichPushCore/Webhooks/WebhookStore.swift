/// Where webhooks, their delivery attempts and their dead letters live (Redis in production).
public protocol WebhookStore: Sendable {
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
public struct WebhookAttempt: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The receiver answered 2xx: done.
        case delivered
        /// It failed; the delivery is tried again later.
        case retrying
        /// It failed and the retry window is over: the delivery is in the dead letters.
        case dead
    }

    public var deliveryId: String
    /// 1 for the first POST.
    public var attempt: Int
    /// ISO 8601, UTC.
    public var at: String
    /// The receiver's HTTP status; nil when no answer came (refused, timed out).
    public var status: Int?
    public var durationMs: Int
    public var events: Int
    public var outcome: Outcome
    public var error: String?

    public init(deliveryId: String, attempt: Int, at: String, status: Int?, durationMs: Int, events: Int, outcome: Outcome, error: String?) {
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
public struct WebhookDeadLetter: Sendable, Hashable, Codable {
    public var deliveryId: String
    public var attempts: Int
    public var firstAttemptAt: String
    public var lastAttemptAt: String
    public var lastError: String
    public var events: Int
    /// The JSON body that was POSTed.
    public var body: String

    public init(deliveryId: String, attempts: Int, firstAttemptAt: String, lastAttemptAt: String, lastError: String, events: Int, body: String) {
        self.deliveryId = deliveryId
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.lastError = lastError
        self.events = events
        self.body = body
    }
}
