/// The worker's side of the notifications: the records it delivers, and the delivery ledger of
/// each, where every (notification, installation) pair is leased before its push and recorded
/// after it. The API's side is ``NotificationStore``.
package protocol DeliveryLedger: Sendable {
    /// Records by id, in order, in one round trip; ids with no record are left out.
    func notifications(ids: [Int]) async throws -> [RichNotification]
    /// The records to send (as ``notifications(ids:)``) and which of them were cancelled, the
    /// state read fresh (a fan-out cancelled midway stops at its next batch), in one round trip.
    func notificationsToSend(ids: [Int]) async throws -> (records: [RichNotification], cancelled: Set<Int>)
    /// Records how many pushes each split fan-out plans, so a cancel can stop its remaining batches
    /// until they have all ended.
    func recordPlannedFanOuts(_ planned: [Int: Int]) async throws
    /// Takes a short lease on each (notification, installation) pair before its push, in the
    /// notification's delivery ledger: pairs already recorded are not pushed again, pairs leased
    /// by a live owner are left to it, and pairs whose lease expired without a record (the owner
    /// died between send and record) are leased again, so nothing is lost silently.
    func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease]
    /// Gives leases back (the pushes failed and will be retried). The pairs stay addressed: a push
    /// whose outcome was unknown (its reply lost) may have reached its device, which must still be
    /// allowed to fetch the payload. A lease that cannot be given back expires on its own.
    func releaseLeases(_ keys: [DeliveryKey]) async throws
    /// Records per-device outcomes and counts of many notifications at once, in the ledger and the
    /// status; moves each one's state to `sent` when any of its pushes went out. Outcomes with
    /// the `retried` counter release their lease instead of recording it, so a retry resends.
    func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws
    /// Counts one more failed attempt for each push (notification → installations) and answers
    /// each one's count so far, in one round trip: the retry limit belongs to the push, not to
    /// the job that carries it beside others. The counts expire with the notification; a replay
    /// of a dead letter (``reviveDeadLettered(_:)``) starts its pushes' counts over.
    func countFailedAttempts(_ pushes: [Int: [String]]) async throws -> [Int: [String: Int]]
    /// Records that held pushes expired before their device came back (notification →
    /// installations): counted `expired`, each device's entry marked so (the platform's id kept).
    func recordExpired(_ expired: [Int: [String]]) async throws
    /// The gate of throttled fan-outs: admits each batch whose pushes keep its notification
    /// within its limit over the last 60 s (answer `.zero`), or says how long until they would.
    /// A batch admitted before (a retry of the same batch) is admitted again without counting twice.
    func admitThrottled(_ batches: [ThrottledBatch]) async throws -> [Duration]
    /// Records that delivery jobs gave up for good (they are about to be dead-lettered), each with
    /// its reason: every pair of the scope with no outcome yet (never leased, given back, or whose
    /// lease expired; not a recorded pair, nor one another owner holds a live lease on) is marked
    /// failed in the ledger and the status, counted `failed` and reported to webhooks as `failed`;
    /// the notification moves to `failed` unless a push of it went out. A whole notification
    /// whose ledger is still empty (its target never resolved) moves to `failed` all the same,
    /// with one `failed` event naming no device. Idempotent: pairs already marked are left alone.
    /// A pair marked so is free to lease: leasing it takes the mark back (counted out of `failed`).
    func recordDeadLettered(_ reasons: [DeliveryScope: String]) async throws
    /// Takes back the marks ``recordDeadLettered(_:)`` left in these scopes (their dead letters
    /// were replayed): those pairs are queued again (free to lease, counted out of `failed`), and
    /// a `failed` notification is `queued` again.
    func reviveDeadLettered(_ scopes: [DeliveryScope]) async throws
    /// What the workers estimate of each of `installations` for the `auto` delivery, each with
    /// whether the device fetched its last silent push (two round trips at most); installations
    /// never estimated are left out.
    func deliveryEstimates(of installations: [String]) async throws -> [String: DeviceEstimate]
    /// Stores `estimates` by installation (one round trip); each lasts ``DeviceEstimate/lifetime``
    /// after its last write, so the estimates of devices gone quiet do not pile up.
    func saveDeliveryEstimates(_ estimates: [String: DeviceEstimate]) async throws
}

/// What one delivery job covers: a notification's whole target, or some of its installations
/// (a fan-out batch).
package struct DeliveryScope: Sendable, Hashable {
    package var notification: Int
    /// nil: every pair of the notification's ledger.
    package var installations: [String]?

    package init(notification: Int, installations: [String]? = nil) {
        self.notification = notification
        self.installations = installations
    }
}

/// One batch of a throttled fan-out asking to go out now.
package struct ThrottledBatch: Sendable, Hashable {
    package var notification: Int
    /// Stable across retries of the same batch (its first installation).
    package var batch: String
    package var pushes: Int
    package var perMinute: Int

    package init(notification: Int, batch: String, pushes: Int, perMinute: Int) {
        self.notification = notification
        self.batch = batch
        self.pushes = pushes
        self.perMinute = perMinute
    }
}

/// What the ledger said to a lease request for one pair.
package enum DeliveryLease: Sendable, Hashable {
    /// Leased to the caller: push it, then record the outcome.
    case leased
    /// The outcome is already recorded: pushing again would be a duplicate.
    case recorded
    /// Another owner's lease is live for this long: try again after it (it will have recorded,
    /// or its lease will have expired and the pair is free).
    case leasedByOther(remaining: Duration)
}

/// One (notification, installation) pair: the unit a push is leased, sent and recorded for.
package struct DeliveryKey: Sendable, Hashable {
    package var notification: Int
    package var installation: String

    package init(notification: Int, installation: String) {
        self.notification = notification
        self.installation = installation
    }
}

extension DeliveryLedger {
    package func leaseDeliveries(id: Int, installations: [String], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        try await leaseDeliveries(installations.map { DeliveryKey(notification: id, installation: $0) }, owner: owner, duration: duration)
    }

    package func recordDeliveries(id: Int, results: [DeliveryResult]) async throws {
        try await recordDeliveries([id: results])
    }
}
