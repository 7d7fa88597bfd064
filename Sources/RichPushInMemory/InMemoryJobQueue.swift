package import RichPushQueue
import Synchronization

/// Collects enqueued jobs, for unit tests of handlers that enqueue follow-up jobs.
package final class InMemoryJobQueue: JobEnqueuing {
    private let jobs = Mutex<[JobRequest]>([])
    private let scheduled = Mutex<[(request: JobRequest, at: Int64)]>([])

    package init() {}

    /// Everything enqueued so far, in order.
    package var requests: [JobRequest] { jobs.withLock { $0 } }

    @discardableResult
    package func enqueue(_ requests: [JobRequest]) async throws -> [String] {
        jobs.withLock { jobs in
            let first = jobs.count
            jobs += requests
            return requests.indices.map { "mem-\(first + $0)" }
        }
    }

    /// Jobs enqueued to run later, with their times, in order.
    package var delayed: [(request: JobRequest, at: Int64)] { scheduled.withLock { $0 } }

    package func enqueue(_ requests: [JobRequest], at times: [Int64]) async throws {
        scheduled.withLock { $0 += zip(requests, times).map { ($0, $1) } }
    }
}
