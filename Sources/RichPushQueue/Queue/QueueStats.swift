/// A snapshot of the queue, as `richpush stats` prints it and the API reads it for back-pressure.
public struct QueueStats: Sendable, Hashable, Codable {
    public struct Consumer: Sendable, Hashable, Codable {
        public let name: String
        public let pending: Int
        /// Milliseconds since the consumer last read or claimed.
        public let idleMilliseconds: Int
    }

    /// Entries in the stream (retained history included).
    public var length: Int
    /// Entries not yet delivered to the group.
    public var lag: Int
    /// Delivered, not yet acknowledged.
    public var pending: Int
    /// Age of the oldest pending job, from its enqueue time, in ms (0 when none).
    public var oldestPendingAgeMilliseconds: Int
    public var delayed: Int
    public var deadLetters: Int
    public var consumers: [Consumer]
    public var processed: Int
    public var retried: Int
    public var failed: Int
    public var deadLettered: Int
    /// Jobs each worker consumer finished, by consumer name; consumers that have left stay listed.
    public var processedByConsumer: [String: Int]

    /// Jobs accepted and not finished: the number back-pressure bounds.
    public var backlog: Int { lag + pending + delayed }
}
