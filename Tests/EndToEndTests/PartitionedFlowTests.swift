import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Testing

/// The pipeline over several queue partitions on one Redis: ids spread over the partitions, each
/// partition read by its own job loop, every push delivered once, the API's reads merged.
@Suite("Partitions", .timeLimit(.minutes(3)))
struct PartitionedFlowTests {
    @Test func sixPartitionsDeliverEachNotificationOnceAndReadsMerge() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server, partitions: 6) { pipeline in
                let simulator = try pipeline.simulator(devices: 8)
                try await withSimulator(simulator, tags: { ["g\($0 % 8)"] }) { log in
                    let ids = try await withWorkers(pipeline.workers()) {
                        let sent = try await BulkSender(pipeline: pipeline).send(240, target: { "g\($0 % 8)" })
                        try await waitUntil(timeout: .seconds(60), "every device to fetch its pushes") { log.count("fetched") >= 240 }
                        return sent.ids
                    }
                    // Each was sent with a random Idempotency-Key, which picks its partition by hash: 40 each
                    // on average, a standard deviation of 5.8. Within 5 of them (12...70): a run that saw 61
                    // failed the old bound of 3.5 (20...60), which about 1 run in 300 misses by chance.
                    let perPartition = Dictionary(grouping: ids, by: { pipeline.keys.partitionIndex(ofNotification: $0) }).mapValues(
                        \.count)
                    #expect(perPartition.count == 6 && perPartition.values.allSatisfy { (12...70).contains($0) }, "\(perPartition)")
                    // Each partition's stream carried its own notifications' jobs.
                    for (index, name) in pipeline.keys.partitionNames.enumerated() {
                        let length = try await pipeline.redis.send("XLEN", "\(pipeline.prefix):{\(name)}:jobs").int ?? 0
                        #expect(length >= perPartition[index] ?? 0, "\(name): \(length) jobs")
                    }
                    // Once each: one received push per (notification, device), fetched once.
                    let received = log.all.filter { $0.event == "received" }.map { "\($0.richId ?? "")/\($0.installation ?? "")" }
                    #expect(received.count == 240 && Set(received).count == 240)
                    #expect(Set(log.all.filter { $0.event == "received" }.compactMap(\.richId)) == Set(ids.map(String.init)))
                    #expect(log.count("fetched") == 240 && log.count("failed") == 0)
                    // A status from any partition, and the creator's list merged newest first.
                    for id in ids.prefix(12) {
                        let status = try await pipeline.status(id, as: "root")
                        #expect((status["counts"] as? [String: Any])?["sent"] as? Int == 1, "\(id): \(status)")
                    }
                    let listed = try await pipeline.call("GET", "api/notifications", as: "root")
                    let listedIDs = ((listed.json["notifications"] as? [[String: Any]]) ?? []).compactMap {
                        ($0["id"] as? String).flatMap(Int.init)
                    }
                    #expect(
                        listedIDs.count >= 20 && listedIDs == Array(ids.sorted(by: >).prefix(listedIDs.count)),
                        "\(listed.status) \(listedIDs.prefix(8))")
                }
            }
        }
    }

    /// An idempotency key's claim and its notification live in the same partition, chosen by the
    /// key; a second create with the key finds the first; cancel and forget reach every partition.
    @Test func idempotencyCancelAndForgetWorkInEveryPartition() async throws {
        try await withRedisServer { server in
            let redis = RedisConnectionPool(configuration: server.configuration, size: 2)
            let keys = StorageKeys(prefix: String(uniqueKeyPrefix("parts").dropLast()), partitions: 4)
            let store = RedisNotificationStore(
                redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                retention: .seconds(600))
            var seen = Set<Int>()
            for n in 0..<24 {
                let key = IdempotencyKey(user: "alice", key: "k\(n)", fingerprint: "f\(n)")
                #expect(try await store.claim(key) == .claimed)
                var draft = NotificationDraft(
                    message: "m", richType: RichType(rawValue: "text"), contentType: "text/plain", payload: Array("p\(n)".utf8),
                    creator: "alice", target: "t")
                draft.idempotency = key
                draft.sendAt = JobQueue.nowMilliseconds() + 600_000
                let record = try await store.create(draft, hashing: { "h-" + String(decoding: $0, as: UTF8.self) })
                seen.insert(keys.partitionIndex(ofNotification: record.id))
                #expect(try await store.claim(key) == .completed(notification: record.id))
                #expect(try await store.payload(hash: record.payloadHash, notification: record.id) == Array("p\(n)".utf8))
                #expect(try await store.cancel(id: record.id) == .cancelled)
            }
            #expect(seen == [0, 1, 2, 3], "the keys spread over every partition: \(seen)")
            let listed = try await store.notifications(createdBy: "alice", before: nil, limit: 100)
            #expect(listed.count == 24 && listed.map(\.id) == listed.map(\.id).sorted(by: >))
            #expect(try await store.forgetNotifications(createdBy: "alice") == 24)
            #expect(try await store.notifications(createdBy: "alice", before: nil, limit: 100).isEmpty)
            await redis.close()
        }
    }
}
