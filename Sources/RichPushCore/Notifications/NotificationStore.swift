/// A new rich notification before it has an id.
public struct NotificationDraft: Sendable, Hashable {
    public var message: String
    public var richType: RichType
    public var contentType: String
    public var payload: [UInt8]
    public var creator: String
    public var target: String

    public init(message: String, richType: RichType, contentType: String, payload: [UInt8], creator: String, target: String) {
        self.message = message
        self.richType = richType
        self.contentType = contentType
        self.payload = payload
        self.creator = creator
        self.target = target
    }
}

/// What a notification's status route shows.
public struct NotificationStatus: Sendable, Hashable, Codable {
    public struct Device: Sendable, Hashable, Codable {
        public var installation: String
        public var state: String
        public var adapterID: String?
        public var error: String?

        public init(installation: String, state: String, adapterID: String? = nil, error: String? = nil) {
            self.installation = installation
            self.state = state
            self.adapterID = adapterID
            self.error = error
        }
    }

    public var id: Int
    public var state: DeliveryState
    public var counts: [String: Int]
    public var devices: [Device]

    public init(id: Int, state: DeliveryState, counts: [String: Int], devices: [Device]) {
        self.id = id
        self.state = state
        self.counts = counts
        self.devices = devices
    }
}

/// What happened to one device's push, for the status route.
public struct DeliveryResult: Sendable, Hashable {
    public var installation: String
    public var counter: DeliveryCounter
    public var adapterID: String?
    public var error: String?

    public init(installation: String, counter: DeliveryCounter, adapterID: String? = nil, error: String? = nil) {
        self.installation = installation
        self.counter = counter
        self.adapterID = adapterID
        self.error = error
    }
}

/// Where rich notifications, their payloads and their status live.
public protocol NotificationStore: Sendable {
    /// Stores the record and the payload and enqueues the delivery job, all or nothing.
    func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification
    func notification(id: Int) async throws -> RichNotification?
    func payload(hash: String) async throws -> [UInt8]?
    /// Notifications created by `user`, newest first, ids below `before`.
    func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification]
    func status(id: Int) async throws -> NotificationStatus?
    /// Counts a fetch once per installation or, without one, once per reader, and moves the
    /// state forward.
    func recordFetch(id: Int, installation: String?, reader: String) async throws
    /// Counts a receipt once per (kind, installation) or, without an installation, once per
    /// (kind, reader), and moves the state forward; false when it was already counted.
    func recordReceipt(id: Int, kind: ReceiptKind, installation: String?, reader: String) async throws -> Bool
    /// Whether the notification was addressed to any of these installations when it was sent
    /// (the worker claimed a push for it): what lets a device's owner read it.
    func wasAddressed(id: Int, to installations: [String]) async throws -> Bool
    /// Charges one notification of `bytes` payload bytes to `user`'s quotas, or says which is
    /// exhausted and for how long. A limit of 0 is no limit.
    func chargeQuota(user: String, bytes: Int, perMinute: Int, liveBytes: Int) async throws -> QuotaRefusal?
    /// Deletes the records, status and index of every notification `user` created (the user is
    /// being removed: a new user of the same name must start empty). Returns how many.
    func forgetNotifications(createdBy user: String) async throws -> Int
    /// Records by id, in order, in one round trip; ids with no record are left out.
    func notifications(ids: [Int]) async throws -> [RichNotification]
    /// Takes a short lease on each (notification, installation) pair before its push, in the
    /// notification's delivery ledger: pairs already recorded are not pushed again, pairs leased
    /// by a live owner are left to it, and pairs whose lease expired without a record (the owner
    /// died between send and record) are leased again, so nothing is lost silently.
    func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease]
    /// Gives leases back (the pushes were not sent and will be retried). A lease that cannot be
    /// given back expires on its own.
    func releaseLeases(_ keys: [DeliveryKey]) async throws
    /// Records per-device outcomes and counts of many notifications at once, in the ledger and the
    /// status; moves each one's state to `sent` when any of its pushes went out. Outcomes with
    /// the `retried` counter release their lease instead of recording it, so a retry resends.
    func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws
}

/// What the ledger said to a lease request for one pair.
public enum DeliveryLease: Sendable, Hashable {
    /// Leased to the caller: push it, then record the outcome.
    case leased
    /// The outcome is already recorded: pushing again would be a duplicate.
    case recorded
    /// Another owner's lease is live for this long: try again after it (it will have recorded,
    /// or its lease will have expired and the pair is free).
    case leasedByOther(remaining: Duration)
}

/// One (notification, installation) pair: the unit a push is leased, sent and recorded for.
public struct DeliveryKey: Sendable, Hashable {
    public var notification: Int
    public var installation: String

    public init(notification: Int, installation: String) {
        self.notification = notification
        self.installation = installation
    }
}

extension NotificationStore {
    public func leaseDeliveries(id: Int, installations: [String], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        try await leaseDeliveries(installations.map { DeliveryKey(notification: id, installation: $0) }, owner: owner, duration: duration)
    }

    public func recordDeliveries(id: Int, results: [DeliveryResult]) async throws {
        try await recordDeliveries([id: results])
    }
}

/// Why a per-user quota refused a request, and when to try again.
public struct QuotaRefusal: Sendable, Hashable, Error {
    public var message: String
    public var retryAfter: Int

    public init(message: String, retryAfter: Int) {
        self.message = message
        self.retryAfter = retryAfter
    }
}
