import Foundation
import Hiredis
import RedisTestSupport
import RichPushQueue
import Testing

/// Pausing an app and reading the delayed set on Redis Cluster: each script's keys are one
/// partition's (its hash tag), the partitions spread over the masters, and the pipelined calls
/// over all partitions reach the right nodes.
@Suite("Pause and delayed jobs on Redis Cluster", .serialized, .timeLimit(.minutes(5)))
struct PauseOnClusterTests {
    @Test func aPausedAppWaitsInEveryPartitionAndTheDelayedSetIsReadAndTrimmed() async throws {
        try await withRedisCluster { cluster in
            let client = RedisClusterClient(configuration: cluster.configuration)
            do {
                let prefix = "pc\(UUID().uuidString.prefix(6).lowercased())"
                let queues = ["q0", "q1", "q2"].map {
                    JobQueue(redis: client, configuration: JobQueueConfiguration(prefix: prefix, partition: $0))
                }
                for queue in queues {
                    try await queue.ensureGroup()
                    try await queue.enqueue((0..<3).map { _ in JobRequest(type: "probe", payload: Array("{}".utf8), app: "a") })
                }
                #expect(try await JobQueue.setPaused(true, app: "a", in: queues) == 3)
                for queue in queues {
                    try await queue.enqueue((0..<2).map { _ in JobRequest(type: "probe", payload: Array("{}".utf8), app: "b") })
                    let taken = try await queue.take(for: "c", count: 64).map { try $0.get() }
                    #expect(taken.map(\.app) == ["b", "b"], "\(queue.configuration.partition)")
                }
                #expect(try await JobQueue.pausedApps(in: queues) == ["a"])
                let stats = try await JobQueue.appTotals(try await JobQueue.appStats(in: queues), in: queues)
                #expect(stats["a"]?.paused == true && stats["a"]?.waiting == 9)

                // The delayed set of each partition: read in slices and trimmed by member.
                let due = JobQueue.nowMilliseconds() + 600_000
                try await queues[1].enqueue(
                    (0..<5).map { JobRequest(type: "probe", payload: Array("{\"n\":\($0)}".utf8), app: "a") },
                    at: Array(repeating: due, count: 5))
                let first = try await queues[1].delayedJobs(from: 0, count: 3)
                let rest = try await queues[1].delayedJobs(from: due, skip: 3, count: 3)
                #expect(first.count == 3 && rest.count == 2 && Set((first + rest).map(\.member)).count == 5)
                #expect((first + rest).allSatisfy { $0.due == due && $0.app == "a" && !$0.isRetry })
                #expect(try await queues[1].delayedJobs(dueAt: [due]).count == 5)
                #expect(try await queues[1].removeDelayed(first.map(\.member)) == 3)
                #expect(try await queues[1].delayedJobs(from: 0, count: 10).count == 2)

                #expect(try await JobQueue.setPaused(false, app: "a", in: queues) == 3)
                for queue in queues {
                    let taken = try await queue.take(for: "c", count: 64).map { try $0.get() }
                    #expect(taken.count == 3 && Set(taken.map(\.app)) == ["a"], "\(queue.configuration.partition)")
                }
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }
}
