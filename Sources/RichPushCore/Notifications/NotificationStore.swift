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
    /// Counts a fetch (once per user) and moves the state forward.
    func recordFetch(id: Int, user: String) async throws
    /// Counts a device receipt and moves the state forward.
    func recordReceipt(id: Int, kind: ReceiptKind, installation: String?) async throws
    /// Claims the right to push notification `id` to each installation once (`SET NX`); true where
    /// this caller won, false where an earlier delivery already did (a redelivered job).
    func claimDeliveries(id: Int, installations: [String]) async throws -> [Bool]
    /// Gives claims back (the push failed and will be retried).
    func releaseDeliveries(id: Int, installations: [String]) async throws
    /// Records per-device outcomes and counts; moves the state to `sent` when any push went out.
    func recordDeliveries(id: Int, results: [DeliveryResult]) async throws
}
