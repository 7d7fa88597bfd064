import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import RichPushSimulator
import RichPushStorage
import Testing

/// The tutorial's "Run the application", automated: API, workers, hub and devices all real.
@Suite("End to end")
struct RichPushFlowTests {
    static let image: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<3000).map { UInt8($0 % 251) }

    func sendImage(_ pipeline: Pipeline) async throws -> Int {
        try await pipeline.send(json: [
            "message": "Check this image out!", "richType": "img", "payload": Data(Self.image).base64EncodedString(),
        ])
    }

    @Test(arguments: [SimulatorConfiguration.AppState.active, .background])
    func pushFetchNotifyAndOpenWithMore(appState: SimulatorConfiguration.AppState) async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let out = server.directory.appendingPathComponent("device")
                let simulator = try pipeline.simulator(appState: appState, out: out)
                let worker = pipeline.worker()
                try await withSimulator(simulator) { log in
                    try await withWorker(worker) {
                        let id = try await sendImage(pipeline)
                        try await waitUntil(timeout: .seconds(60), "the device to open the image") { log.count("opened") == 1 }
                        let steps = log.all.filter { $0.richId == String(id) }.map(\.event)
                        let shown = appState == .active ? "alert" : "banner"
                        #expect(steps == ["received", "fetched", "scheduled", shown, "opened"])
                        let opened = try #require(log.all.first { $0.event == "opened" })
                        let saved = try #require(opened.path)
                        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: saved))) == Self.image)
                        // The device can be done before the worker has recorded the hub's answer.
                        try await waitUntil(timeout: .seconds(60), "the status to reach opened, with the push recorded") {
                            let status = try await pipeline.status(id)
                            return status["state"] as? String == "opened" && (status["counts"] as? [String: Int])?["sent"] == 1
                        }
                        let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
                        #expect(counts["sent"] == 1 && counts["displayed"] == 1 && counts["opened"] == 1)
                        // The receipts moved the device to opened and kept the platform's id of its push.
                        let device = try #require((try await pipeline.status(id)["devices"] as? [[String: Any]])?.first)
                        #expect(device["state"] as? String == "opened")
                        #expect((device["adapterID"] as? String)?.isEmpty == false, "\(device)")
                    }
                }
            }
        }
    }

    @Test func aRedeliveredJobDoesNotPushTwice() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        let id = try await sendImage(pipeline)
                        try await waitUntil(timeout: .seconds(60), "the first delivery") { log.count("received") == 1 }
                        // The device can have it before the worker records it; a replay in between
                        // would find the worker's lease and wait it out (30 s) before it is suppressed.
                        try await waitUntil(timeout: .seconds(60), "the first delivery's record") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 1
                        }
                        // Replay the same job from the stream's history, as an operator would.
                        let history = try await pipeline.queue.replay(from: "-", to: "+")
                        #expect(history.candidates.count == 1)
                        try await waitUntil(timeout: .seconds(60), "the replay to be suppressed") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["duplicateSuppressed"] == 1
                        }
                        #expect(log.count("received") == 1)
                        #expect((try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 1)
                    }
                }
            }
        }
    }

    @Test func aPushLeasedByAWorkerThatDiedIsSentOnceItsLeaseExpires() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                try await withSimulator(simulator) { log in
                    let id = try await sendImage(pipeline)
                    let device = try #require(
                        try await RedisInstallationStore(redis: pipeline.redis, keys: pipeline.keys).installations(owner: "alice").first)
                    // A worker leased the pair and died before sending (or before recording).
                    let store = RedisNotificationStore(
                        redis: pipeline.redis, keys: pipeline.keys, queue: pipeline.queue, retention: .seconds(3600))
                    #expect(
                        try await store.ledger.leaseDeliveries(
                            id: id, installations: [device.id], owner: "dead", duration: .milliseconds(1500)) == [.leased])
                    try await withWorker(pipeline.worker()) {
                        // The live worker leaves the lease alone, comes back after it and sends.
                        try await waitUntil(timeout: .seconds(60), "the push after the lease") { log.count("received") == 1 }
                        try await waitUntil(timeout: .seconds(60), "the record") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 1
                        }
                    }
                    #expect(log.count("received") == 1)
                    #expect(
                        try await store.ledger.leaseDeliveries(id: id, installations: [device.id], owner: "later", duration: .seconds(1))
                            == [.recorded])
                }
            }
        }
    }

    @Test func anOfflineDeviceGetsTheHeldPushWhenItComesBack() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                // The device registers, then goes offline.
                let first = try pipeline.simulator(handlePrefix: "offline")
                try await first.start()
                await first.stop()
                let id = try await withWorker(pipeline.worker()) {
                    let id = try await sendImage(pipeline)
                    try await waitUntil(timeout: .seconds(60), "the push to be held") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                    }
                    let counts = try await pipeline.status(id)["counts"] as? [String: Int]
                    #expect(counts?["sent"] == 0)
                    let devices = try await pipeline.status(id)["devices"] as? [[String: Any]]
                    #expect(devices?.first?["state"] as? String == "held")
                    return id
                }
                let held = try await pipeline.redis.send(
                    "EXISTS", OfflineStore(prefix: pipeline.prefix).key("\(pipeline.prefix)-offline-0"))
                #expect(held == .integer(1))
                // Back online (same handle: the seed's registration keeps the same id).
                let again = try pipeline.simulator(handlePrefix: "offline")
                try await withSimulator(again) { log in
                    try await waitUntil(timeout: .seconds(60), "the held push to arrive") { log.count("opened") == 1 }
                    #expect(log.all.first { $0.event == "received" }?.richId == String(id))
                }
            }
        }
    }

    @Test func aDeviceTakesWhatWasHeldWhileItsHubConnectionWasDown() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none, handlePrefix: "flaky")
                try await withSimulator(simulator) { log in
                    let handle = "\(pipeline.prefix)-flaky-0"
                    // What the hub keeps when a PUBLISH finds no subscriber: as if a push came
                    // in the moment the device's connection was down.
                    let payload = Array(#"{"aps":{"content-available":1},"richId":"4242","richType":"text","richMessage":"held"}"#.utf8)
                    let envelope = SimulatedEnvelope.encode(
                        id: "4242:x", installation: "x", sentAt: 0, pushType: "background", payload: payload)
                    try await pipeline.redis.send(
                        "HSET", OfflineStore(prefix: pipeline.prefix).key(handle), "4242",
                        OfflineStore.value(envelope: envelope, expiresAt: JobQueue.nowMilliseconds() + 60_000))
                    // The connection drops; the subscriber restores it and the device takes the held push.
                    try await pipeline.redis.send("CLIENT", "KILL", "TYPE", "pubsub")
                    try await waitUntil(timeout: .seconds(60), "the held push after the reconnection") {
                        log.all.contains { $0.event == "received" && $0.richId == "4242" }
                    }
                    let left = try await pipeline.redis.send("EXISTS", OfflineStore(prefix: pipeline.prefix).key(handle))
                    #expect(left == .integer(0))
                }
            }
        }
    }

    @Test func fanOutToFiveThousandDevicesReachesEachOnce() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let store = RedisInstallationStore(redis: pipeline.redis, keys: pipeline.keys)
                let handles = (0..<5000).map { "\(pipeline.prefix)-bulk-\($0)" }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for chunk in stride(from: 0, to: handles.count, by: 500) {
                        group.addTask {
                            for (offset, handle) in handles[chunk..<min(chunk + 500, handles.count)].enumerated() {
                                _ = try await store.save(
                                    Installation(
                                        id: "bulk\(chunk + offset)", platform: .apns, handle: handle,
                                        tags: ["username:alice"], owner: "alice", updatedAt: 0), limits: RegistrationLimits())
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let subscriber = RedisSubscriber(configuration: server.configuration)
                try await subscriber.ssubscribe(handles.map { SimulatedHubAdapter.channel(prefix: pipeline.prefix, handle: $0) })
                let id = try await withWorkers([pipeline.worker(fanOutBatch: 500), pipeline.worker(fanOutBatch: 500)]) {
                    let id = try await sendImage(pipeline)
                    var perChannel: [String: Int] = [:]
                    for await message in subscriber.messages {
                        perChannel[message.channel, default: 0] += 1
                        if perChannel.count == handles.count { break }
                    }
                    #expect(perChannel.count == 5000 && perChannel.values.allSatisfy { $0 == 1 })
                    try await waitUntil(timeout: .seconds(60), "all outcomes to be recorded") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 5000
                    }
                    // The app's sent total (the console's sent/s) counts each push once, with the acks.
                    try await waitUntil(timeout: .seconds(60), "the app's sent total to reach 5000") {
                        let totals =
                            try await pipeline.redis.send("HMGET", pipeline.queue.configuration.schedulerKey, "s:default", "s:_").array
                            ?? []
                        return totals.compactMap { $0.string.flatMap(Int.init) }.reduce(0, +) == 5000
                    }
                    return id
                }
                await subscriber.close()
                #expect((try await pipeline.status(id)["counts"] as? [String: Int])?["duplicateSuppressed"] == 0)
            }
        }
    }

    @Test func aFetchThatMeets503IsRetriedWithinTheBackgroundBudget() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(handlePrefix: "retry")
                try await withSimulator(simulator) { log in
                    let id = try await sendImage(pipeline)
                    // Redis refuses writes (OOM): the API answers the fetch 503 + Retry-After.
                    _ = try await pipeline.redis.send("CONFIG", "SET", "maxmemory", 1)
                    let channel = SimulatedHubAdapter.channel(prefix: pipeline.prefix, handle: "\(pipeline.prefix)-retry-0")
                    let push = #"{"aps":{"content-available":1},"richId":"\#(id)","richMessage":"m","richType":"img"}"#
                    let envelope = SimulatedEnvelope.encode(
                        id: "\(id)", installation: "x", sentAt: 0, pushType: "background", payload: Array(push.utf8))
                    #expect(try await pipeline.redis.send("SPUBLISH", channel, envelope) == .integer(1))
                    try await Task.sleep(for: .milliseconds(1500))
                    #expect(log.count("fetched") == 0)
                    _ = try await pipeline.redis.send("CONFIG", "SET", "maxmemory", 0)
                    try await waitUntil(timeout: .seconds(60), "the fetch to go through") { log.count("fetched") == 1 }
                    #expect(log.count("failed") == 0)
                }
            }
        }
    }

    @Test func unknownRichTypesAndFailedFetchesAreReportedAsFailed() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(handlePrefix: "fails")
                try await withSimulator(simulator) { log in
                    let channel = SimulatedHubAdapter.channel(prefix: pipeline.prefix, handle: "\(pipeline.prefix)-fails-0")
                    func publish(_ push: String, id: String) async throws {
                        let envelope = SimulatedEnvelope.encode(
                            id: id, installation: "x", sentAt: 0, pushType: "background", payload: Array(push.utf8))
                        #expect(try await pipeline.redis.send("SPUBLISH", channel, envelope) == .integer(1))
                    }
                    try await publish(#"{"aps":{"content-available":1},"richId":"1","richMessage":"m","richType":"video"}"#, id: "t1")
                    try await publish(#"{"aps":{"content-available":1},"richId":"424242","richMessage":"m","richType":"img"}"#, id: "t2")
                    try await waitUntil(timeout: .seconds(60), "two failures") { log.count("failed") == 2 }
                    let failures = log.all.filter { $0.event == "failed" }
                    #expect(failures.contains { $0.detail?.contains("unsupported rich type 'video'") == true })
                    #expect(failures.contains { $0.status == 404 && $0.richId == "424242" })
                    #expect(log.count("alert") == 0)
                }
            }
        }
    }
}
