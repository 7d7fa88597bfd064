/// How many jobs one worker consumer handled, to show how evenly the queue spread the load.
package struct WorkerShare: Codable, Sendable, Equatable {
    /// The consumer name in the Redis consumer group.
    package var consumer: String
    /// Jobs it acknowledged during the run.
    package var jobs: Int

    package init(consumer: String, jobs: Int) {
        self.consumer = consumer
        self.jobs = jobs
    }
}
