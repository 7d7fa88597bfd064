/// A new rich notification before it has an id.
package struct NotificationDraft: Sendable, Hashable {
    package var message: String
    package var richType: RichType
    package var contentType: String
    package var payload: [UInt8]
    package var creator: String
    package var target: String
    /// When set, the notification completes this claimed key in the same write that creates it.
    package var idempotency: IdempotencyKey?
    package var delivery: DeliveryOptions
    /// When to send, ms since 1970; nil: now.
    package var sendAt: Int64?
    /// The creator's quotas, charged in the step that creates it; a refusal is thrown as
    /// ``QuotaRefusal`` and nothing is created. nil: no quota.
    package var quota: QuotaLimits?
    /// A template send's properties (nil: a plain rich push).
    package var properties: SendProperties?
    /// A native send: its payload as written, for one format's devices (nil: rendered).
    package var native: NativePush?
    /// NH's template send: devices without a template for it are not its audience.
    package var templatesOnly = false
    /// Only these installations (the console's test send): its job names them, as a fan-out's
    /// share does, and each still gets it only if it matches `target`. nil: the whole target.
    package var installations: [String]?

    package init(
        message: String, richType: RichType, contentType: String, payload: [UInt8], creator: String, target: String,
        idempotency: IdempotencyKey? = nil, delivery: DeliveryOptions = DeliveryOptions()
    ) {
        self.idempotency = idempotency
        self.delivery = delivery
        self.message = message
        self.richType = richType
        self.contentType = contentType
        self.payload = payload
        self.creator = creator
        self.target = target
    }
}

/// What a notification's status route shows.
package struct NotificationStatus: Sendable, Hashable, Codable {
    package struct Device: Sendable, Hashable, Codable {
        package var installation: String
        package var state: String
        package var adapterID: String?
        package var error: String?
        /// A template send: the template the device got and the locale its properties were
        /// taken in (nil: the plain push, or no property was localized).
        package var template: String?
        package var locale: String?
        /// An `auto` send: the form the device got and why.
        package var strategy: String?
        /// When each step was recorded, ms since 1970, by name: `at` (the worker's outcome),
        /// `fetchedAt`, `displayedAt`, `openedAt`; a step recorded before these times were kept has
        /// none. The console shows them; the API's status leaves them out (not in its coding keys).
        package var times: [String: Int64]?

        private enum CodingKeys: String, CodingKey {
            case installation, state, adapterID, error, template, locale, strategy
        }

        package init(
            installation: String, state: String, adapterID: String? = nil, error: String? = nil, template: String? = nil,
            locale: String? = nil, strategy: String? = nil,
            times: [String: Int64]? = nil
        ) {
            self.strategy = strategy
            self.times = times
            self.installation = installation
            self.state = state
            self.adapterID = adapterID
            self.error = error
            self.template = template
            self.locale = locale
        }
    }

    package var id: Int
    package var state: DeliveryState
    package var counts: [String: Int]
    package var devices: [Device]

    package init(id: Int, state: DeliveryState, counts: [String: Int], devices: [Device]) {
        self.id = id
        self.state = state
        self.counts = counts
        self.devices = devices
    }
}

/// What happened to one device's push, for the status route.
package struct DeliveryResult: Sendable, Hashable {
    package var installation: String
    package var counter: DeliveryCounter
    package var adapterID: String?
    package var error: String?
    /// A template send: the device's template and the locale chosen for it (shown in the status).
    package var template: String?
    package var locale: String?
    /// An `auto` send: the form the device got and why (``AutoDelivery/Choice``).
    package var strategy: String?

    package init(
        installation: String, counter: DeliveryCounter, adapterID: String? = nil, error: String? = nil, template: String? = nil,
        locale: String? = nil, strategy: String? = nil
    ) {
        self.installation = installation
        self.counter = counter
        self.adapterID = adapterID
        self.error = error
        self.template = template
        self.locale = locale
        self.strategy = strategy
    }
}

/// Where rich notifications, their payloads and their status live: the API's side. The
/// worker's side, the delivery ledger, is ``DeliveryLedger``.
package protocol NotificationStore: Sendable {
    /// Stores the record and the payload and enqueues the delivery job, all or nothing. With
    /// `draft.quota`, charges it first and throws ``QuotaRefusal`` (nothing created) when it is spent.
    func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification
    /// Creates each draft as ``create(_:hashing:)`` does, together (pipelined on Redis): one
    /// outcome per draft, in order; a spent quota or a transient failure of one draft is that
    /// draft's `.failure`. Throws when the store could not be reached for the whole batch: which
    /// drafts were created is then unknown (a draft with an idempotency key is safe to send again).
    func create(_ drafts: [NotificationDraft], hashing: ([UInt8]) -> String) async throws -> [Result<RichNotification, any Error>]
    /// Claims `key` for a request about to create a notification, or says what holds it.
    func claim(_ key: IdempotencyKey) async throws -> IdempotencyClaim
    /// ``claim(_:)`` for each key, together: one answer per key, in order.
    func claim(_ keys: [IdempotencyKey]) async throws -> [IdempotencyClaim]
    /// ``release(_:)`` for each key, together.
    func release(_ keys: [IdempotencyKey]) async throws
    /// Frees a key this request claimed but did not complete (its create failed), so a retry can
    /// go ahead at once; a completed key or another request's claim is left alone.
    func release(_ key: IdempotencyKey) async throws
    /// Cancels a notification that has not been sent yet (scheduled or queued): its jobs find it
    /// cancelled and send nothing more.
    func cancel(id: Int) async throws -> CancelOutcome
    /// Cancels each notification as ``cancel(id:)`` does, together (pipelined on Redis): one
    /// outcome per id, in order; an error reply for one id is that id's `.failure`. Throws when the
    /// store could not be reached: which were cancelled is then unknown (a cancel is safe to repeat).
    /// `progress` gets, batch by batch as they are done, how many of the batch are cancelled (now
    /// or already): the console's bulk cancel shows it as it goes.
    func cancel(ids: [Int], progress: (Int) async -> Void) async throws -> [Result<CancelOutcome, any Error>]
    func notification(id: Int) async throws -> RichNotification?
    /// The payload bytes of notification `id` (content hash `hash`), nil once expired.
    func payload(hash: String, notification id: Int) async throws -> [UInt8]?
    /// Notifications created by `user`, newest first, ids below `before`.
    func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification]
    func status(id: Int) async throws -> NotificationStatus?
    /// Counts a fetch once per installation or, without one, once per reader, and moves the
    /// state forward. With `check`, only if the notification is readable as it says, decided in
    /// the same step: false, and nothing recorded, if not (or if there is no such notification).
    func recordFetch(id: Int, installation: String?, reader: String, if check: ReadCheck?) async throws -> Bool
    /// Counts a receipt once per (kind, installation) or, without an installation, once per
    /// (kind, reader), and moves the state forward. With `check`, only if the notification is
    /// readable as it says, decided in the same step.
    func recordReceipt(
        id: Int, kind: ReceiptKind, installation: String?, reader: String, if check: ReadCheck?
    ) async throws -> ReceiptOutcome
    /// Whether notification `id` exists and is readable as `check` says.
    func isReadable(id: Int, _ check: ReadCheck) async throws -> Bool
    /// Charges one notification of `bytes` payload bytes to `user`'s quotas, or says which is
    /// exhausted and for how long. A limit of 0 is no limit.
    func chargeQuota(user: String, bytes: Int, limits: QuotaLimits) async throws -> QuotaRefusal?
    /// Charges one notification per element of `bytes`, in order, as ``chargeQuota(user:bytes:limits:)``
    /// does for one; a refused one charges nothing.
    func chargeQuotas(user: String, bytes: [Int], limits: QuotaLimits) async throws -> [QuotaRefusal?]
    /// Deletes the records, status and index of every notification `user` created (the user is
    /// being removed: a new user of the same name must start empty). Returns how many.
    func forgetNotifications(createdBy user: String) async throws -> Int
    /// Records by id, in order, in one round trip; ids with no record are left out.
    func notifications(ids: [Int]) async throws -> [RichNotification]
    /// Above every notification id given so far (of any app): where a scan of ids ends.
    func idCeiling() async throws -> Int
    /// Of `ids`, the notifications that were addressed to `installation` and whose payload it has
    /// not fetched, in the order given, in one round trip: what a device catching up after its
    /// platform kept only the newest push still has to fetch.
    func unfetched(by installation: String, among ids: [Int]) async throws -> [Int]
}

/// A user's (or an app's) quotas: a rate of notifications, with bursts, and the payload bytes
/// still kept. The rate is a token bucket: `burst` notifications at once at most, then one more
/// per `1/perMinute` minute as the bucket refills (a fixed minute window would take `perMinute`
/// back to back, and as many again as the next minute starts).
package struct QuotaLimits: Sendable, Hashable {
    /// Notifications per minute, sustained (0: no limit).
    package var perMinute: Int
    /// Notifications at once, the bucket's size (the per-minute figure when not given).
    package var burst: Int
    /// Payload bytes still within the retention (0: no limit).
    package var liveBytes: Int

    package init(perMinute: Int, burst: Int? = nil, liveBytes: Int) {
        self.perMinute = perMinute
        self.burst = max(1, burst ?? perMinute)
        self.liveBytes = liveBytes
    }

    package var isUnlimited: Bool { perMinute <= 0 && liveBytes <= 0 }
}

/// Why a per-user quota refused a request, and when to try again.
package struct QuotaRefusal: Sendable, Hashable, Error {
    /// Which limit refused.
    package enum Limit: String, Sendable, Hashable {
        case perMinute
        case liveBytes
    }

    package var message: String
    package var retryAfter: Int
    /// Nil when the refusal is of another kind (registrations, tags).
    package var limit: Limit?

    package init(message: String, retryAfter: Int, limit: Limit? = nil) {
        self.message = message
        self.retryAfter = retryAfter
        self.limit = limit
    }
}

/// What recording a receipt did.
package enum ReceiptOutcome: Sendable, Hashable {
    case counted
    /// This (kind, installation or reader) was counted before.
    case duplicate
    /// The notification is not readable as the check said (or does not exist): nothing recorded.
    case unreadable
}

/// What cancelling a notification did.
package enum CancelOutcome: Sendable, Hashable {
    case cancelled
    /// It was cancelled before: nothing changed.
    case alreadyCancelled
    /// Too late: it reached this state.
    case tooLate(DeliveryState)
    case notFound

    /// Cancelled now or before: what a bulk cancel counts as done.
    package var isCancelled: Bool { self == .cancelled || self == .alreadyCancelled }
}

extension NotificationStore {
    package func chargeQuotas(user: String, bytes: [Int], limits: QuotaLimits) async throws -> [QuotaRefusal?] {
        var refusals: [QuotaRefusal?] = []
        for size in bytes { refusals.append(try await chargeQuota(user: user, bytes: size, limits: limits)) }
        return refusals
    }
}
