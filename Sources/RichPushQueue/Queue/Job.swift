/// One job as stored in the stream: a type naming its handler, opaque payload bytes, and the
/// bookkeeping the queue needs (attempt, enqueue time, first stream id).
package struct Job: Sendable, Hashable {
    /// The stream entry id of this delivery (`<ms>-<seq>`); changes when the job is retried.
    package let id: String
    package let type: String
    package let payload: [UInt8]
    /// Failed attempts so far (0 on the first run).
    package let attempt: Int
    /// Milliseconds since 1970 when the job was first enqueued.
    package let enqueuedAt: Int64
    /// The stream id the job had when first enqueued; stays the same across retries and replays.
    package let origin: String
    /// The error of the last failed attempt, if any.
    package let lastError: String?

    package init(id: String, type: String, payload: [UInt8], attempt: Int = 0, enqueuedAt: Int64, origin: String? = nil, lastError: String? = nil) {
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
package struct JobRequest: Sendable, Hashable {
    package var type: String
    package var payload: [UInt8]
    /// Enqueueing the same key again within the queue's idempotency TTL returns the first job's id
    /// and adds nothing.
    package var idempotencyKey: String?

    package init(type: String, payload: [UInt8], idempotencyKey: String? = nil) {
        self.type = type
        self.payload = payload
        self.idempotencyKey = idempotencyKey
    }
}
