public import RichPushQueue
import Synchronization

/// Collects enqueued jobs, for unit tests of handlers that enqueue follow-up jobs.
public final class InMemoryJobQueue: JobEnqueuing {
    private let jobs = Mutex<[JobRequest]>([])

    public init() {}

    /// Everything enqueued so far, in order.
    public var requests: [JobRequest] { jobs.withLock { $0 } }

    @discardableResult
    public func enqueue(_ requests: [JobRequest]) async throws -> [String] {
        jobs.withLock { jobs in
            let first = jobs.count
            jobs += requests
            return requests.indices.map { "mem-\(first + $0)" }
        }
    }
}
