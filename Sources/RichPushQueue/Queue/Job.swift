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
    /// The platforms (`apns`, `fcm`, …) whose pushes failed in the last failed attempt, as its
    /// handler said (``JobError/platforms``); empty when it named none.
    package let failedOn: [String]
    /// Whose job it is and in which lane it waited (fair scheduling, see ``JobScheduling``).
    package let app: String?
    package let lane: JobLane
    /// The app (fair scheduling's app) whose count of jobs in flight includes this delivery:
    /// set when fair scheduling took the job from the app's lane, so settling it gives the
    /// count back. (Not a hold: the offline store keeps pushes, a provider pause stops sends.)
    package let inFlightApp: String?

    package init(
        id: String, type: String, payload: [UInt8], attempt: Int = 0, enqueuedAt: Int64, origin: String? = nil, lastError: String? = nil,
        failedOn: [String] = [], app: String? = nil, lane: JobLane = .now, inFlightApp: String? = nil
    ) {
        self.failedOn = failedOn
        self.id = id
        self.type = type
        self.payload = payload
        self.attempt = attempt
        self.enqueuedAt = enqueuedAt
        self.origin = origin ?? id
        self.lastError = lastError
        self.app = app
        self.lane = lane
        self.inFlightApp = inFlightApp
    }
}

/// Where a job waits inside its app under fair scheduling: jobs for one or a few devices
/// (`now`) are taken before the same app's bulk work (a fan-out's sub-jobs).
package enum JobLane: String, Sendable, Hashable, CaseIterable {
    case now
    case bulk
}

/// What a producer asks to enqueue.
package struct JobRequest: Sendable, Hashable {
    package var type: String
    package var payload: [UInt8]
    /// Enqueueing the same key again within the queue's idempotency TTL returns the first job's id
    /// and adds nothing.
    package var idempotencyKey: String?
    /// Whose job it is (an app): fair scheduling shares the workers between apps by weight.
    /// Jobs without one share the app ``JobRequest/sharedApp``.
    package var app: String?
    package var lane: JobLane

    package init(type: String, payload: [UInt8], idempotencyKey: String? = nil, app: String? = nil, lane: JobLane = .now) {
        self.type = type
        self.payload = payload
        self.idempotencyKey = idempotencyKey
        self.app = app
        self.lane = lane
    }

    /// The app of jobs that name none.
    package static let sharedApp = "_"
}
