/// One job as stored in the stream: a type naming its handler, opaque payload bytes, and the
/// bookkeeping the queue needs (attempt, enqueue time, first stream id).
public struct Job: Sendable, Hashable {
    /// The stream entry id of this delivery (`<ms>-<seq>`); changes when the job is retried.
    public let id: String
    public let type: String
    public let payload: [UInt8]
    /// Failed attempts so far (0 on the first run).
    public let attempt: Int
    /// Milliseconds since 1970 when the job was first enqueued.
    public let enqueuedAt: Int64
    /// The stream id the job had when first enqueued; stays the same across retries and replays.
    public let origin: String
    /// The error of the last failed attempt, if any.
    public let lastError: String?

    public init(id: String, type: String, payload: [UInt8], attempt: Int = 0, enqueuedAt: Int64, origin: String? = nil, lastError: String? = nil) {
        self.id = id
        self.type = type
        self.payload = payload
        self.attempt = attempt
        self.enqueuedAt = enqueuedAt
        self.origin = origin ?? id
        self.lastError = lastError
    }
}

/// What a producer asks to enqueue.
public struct JobRequest: Sendable, Hashable {
    public var type: String
    public var payload: [UInt8]
    /// Enqueueing the same key again within the queue's idempotency TTL returns the first job's id
    /// and adds nothing.
    public var idempotencyKey: String?

    public init(type: String, payload: [UInt8], idempotencyKey: String? = nil) {
        self.type = type
        self.payload = payload
        self.idempotencyKey = idempotencyKey
    }
}
