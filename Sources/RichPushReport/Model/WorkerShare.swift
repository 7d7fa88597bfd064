/// How many jobs one worker consumer handled, to show how evenly the queue spread the load.
public struct WorkerShare: Codable, Sendable, Equatable {
    /// The consumer name in the Redis consumer group.
    public var consumer: String
    /// Jobs it acknowledged during the run.
    public var jobs: Int

    public init(consumer: String, jobs: Int) {
        self.consumer = consumer
        self.jobs = jobs
    }
}
