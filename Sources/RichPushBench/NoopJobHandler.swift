import Foundation
package import Hiredis
package import RichPushQueue
import Synchronization

/// Does nothing but measure: for benchmarks. It records each job's latency from enqueue to
/// handling (payload = decimal µs since 1970 at enqueue, else the queue's ms enqueue time) and
/// appends the samples (µs) to a Redis list in batches of 1000, and the rest at shutdown.
package final class NoopJobHandler: JobHandler {
    package static let type = "noop"

    private let redis: any RedisClient
    private let latencyKey: String?
    private let samples = Mutex<[Int]>([])

    /// Without `latencyKey` nothing is recorded.
    package init(redis: any RedisClient, latencyKey: String?) {
        self.redis = redis
        self.latencyKey = latencyKey
    }

    package func handle(_ job: Job) async throws {
        guard latencyKey != nil else { return }
        let now = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
        let sent = Int(String(decoding: job.payload, as: UTF8.self)) ?? Int(job.enqueuedAt) * 1000
        let full: [Int]? = samples.withLock { samples in
            samples.append(now - sent)
            guard samples.count >= 1000 else { return nil }
            defer { samples.removeAll(keepingCapacity: true) }
            return samples
        }
        if let full { try await flush(full) }
    }

    package func shutdown() async {
        let rest = samples.withLock { samples in
            defer { samples.removeAll() }
            return samples
        }
        try? await flush(rest)
    }

    private func flush(_ batch: [Int]) async throws {
        guard let latencyKey, !batch.isEmpty else { return }
        var push = RedisCommand("RPUSH", latencyKey)
        for sample in batch { push.append(sample) }
        try await redis.send(push)
    }
}
