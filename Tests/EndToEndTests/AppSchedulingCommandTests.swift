import Foundation
import Hiredis
import RedisTestSupport
import RichPushApps
import RichPushCore
import RichPushQueue
import Testing

/// `richpush apps create|set --weight --max-in-flight` and `richpush stats`'s per-app numbers, as
/// an operator runs them against a queue of two partitions.
@Suite("richpush apps: weight and max in flight; richpush stats by app", .serialized)
struct AppSchedulingCommandTests {
    static func jobs(_ app: String, _ count: Int, lane: JobLane = .now) -> [JobRequest] {
        (0..<count).map { JobRequest(type: "probe", payload: Array("\(app)-\($0)".utf8), app: app, lane: lane) }
    }

    @Test func setWeightAndCapReachEveryPartitionAndTheTake() async throws {
        try await withRedisServer { server in
            let prefix = String(uniqueKeyPrefix("fairops").dropLast())
            let common = ["--redis-url", server.url, "--queue-prefix", prefix, "--partitions", "2"]
            let kekFile = try await Self.kekFile(server)
            let redis = RedisConnectionPool(configuration: server.configuration, size: 1)
            let queues = ["q0", "q1"].map { JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix, partition: $0)) }
            func fields(_ app: String) async throws -> [[String?]] {
                var all: [[String?]] = []
                for queue in queues {
                    all.append(
                        try await redis.send("HMGET", queue.configuration.schedulerKey, "w:\(app)", "c:\(app)").array?.map(\.string) ?? [])
                }
                return all
            }

            let created = try await AppsCommandTests.run(
                ["apps", "create", "shop", "--weight", "3"] + common + ["--kek-file", kekFile.path],
                server: server, name: "create")
            #expect(
                created.status == 0 && created.output.contains("\"weight\" : 3") && !created.output.contains("maxInFlight"),
                "\(created.output)")
            #expect(try await fields("shop") == [["3", nil], ["3", nil]])

            let capped = try await AppsCommandTests.run(
                ["apps", "set", "shop", "--max-in-flight", "2"] + common, server: server, name: "cap")
            #expect(
                capped.status == 0 && capped.output.contains("\"maxInFlight\" : 2") && capped.output.contains("\"weight\" : 3"),
                "\(capped.output)")
            #expect(try await fields("shop") == [["3", "2"], ["3", "2"]])
            let shown = try await AppsCommandTests.run(["apps", "show", "shop"] + common, server: server, name: "show")
            #expect(shown.output.contains("\"maxInFlight\" : 2") && shown.output.contains("\"weight\" : 3"), "\(shown.output)")

            // The take feels both: shop's cap of 2 in flight holds while news takes the rest.
            try await queues[0].ensureGroup()
            try await queues[0].enqueue(Self.jobs("shop", 10) + Self.jobs("news", 10))
            let taken = try await queues[0].take(for: "c", count: 8).map { try $0.get() }
            #expect(taken.filter { $0.app == "shop" }.count == 2 && taken.count == 8, "\(taken.map(\.app))")

            // Pushes of shop failed in both partitions (as the worker counts them); shop is busy in the first only.
            try await queues[0].countFailedPushes(["BadDeviceToken": 3], app: "shop")
            try await queues[1].countFailedPushes(["BadDeviceToken": 1, "http_500": 2], app: "shop")
            // What `richpush stats` shows of it, as JSON (every app) and as the table.
            let json = try await AppsCommandTests.run(["stats", "--json"] + common, server: server, name: "stats-json")
            #expect(json.status == 0, "\(json.output)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.jsonText(json.output).utf8)) as? [String: Any])
            let apps = try #require((object["total"] as? [String: Any])?["apps"] as? [String: [String: Any]], "\(json.output)")
            #expect(
                apps["shop"]?["waitingNow"] as? Int == 8 && apps["shop"]?["inFlight"] as? Int == 2 && apps["shop"]?["taken"] as? Int == 2)
            #expect(apps["shop"]?["weight"] as? Int == 3 && apps["shop"]?["maxInFlight"] as? Int == 2)
            #expect(apps["news"]?["waitingNow"] as? Int == 4 && apps["news"]?["inFlight"] as? Int == 6)
            #expect(
                apps["shop"]?["failedByReason"] as? [String: Int] == ["BadDeviceToken": 4, "http_500": 2], "every partition's, by reason")
            #expect(apps["news"]?["failedByReason"] as? [String: Int] == [:])
            let text = try await AppsCommandTests.run(["stats"] + common, server: server, name: "stats")
            #expect(text.status == 0 && text.output.contains("apps with work or in flight: 2"), "\(text.output)")
            let shopRow =
                text.output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("shop ") }.map(String.init)
                ?? ""
            // app, weight, cap, now, bulk, oldest ("0.1 s"), in flight, taken, done, failed pushes.
            let cells = shopRow.split(separator: " ").map(String.init)
            #expect(
                cells.count == 11 && Array(cells.prefix(5)) == ["shop", "3", "2", "8", "0"]
                    && Array(cells.suffix(5)) == ["s", "2", "2", "0", "6"],
                "\(text.output)")

            // `none` removes the cap; the weight stays.
            let uncapped = try await AppsCommandTests.run(
                ["apps", "set", "shop", "--max-in-flight", "none"] + common, server: server, name: "uncap")
            #expect(uncapped.status == 0 && !uncapped.output.contains("maxInFlight"), "\(uncapped.output)")
            #expect(try await fields("shop") == [["3", nil], ["3", nil]])

            // Removed while paused with jobs waiting: its weight and pause go from both partitions
            // (its leftover jobs are taken, and fail as a removed app's instead of waiting unseen).
            let paused = try await AppsCommandTests.run(["apps", "pause", "shop"] + common, server: server, name: "pause")
            #expect(paused.status == 0, "\(paused.output)")
            let removed = try await AppsCommandTests.run(["apps", "remove", "shop"] + common, server: server, name: "remove")
            #expect(removed.status == 0 && removed.output.contains("removed shop"), "\(removed.output)")
            #expect(try await fields("shop") == [[nil, nil], [nil, nil]])
            for queue in queues { #expect(try await redis.send("HGET", queue.configuration.schedulerKey, "x:shop").isNull) }
            await redis.close()
        }
    }

    /// A worker writes every app's stored weight and cap into the partitions it serves when it
    /// starts: a partition added after `apps set` gets them without another `apps set`.
    @Test func aStartingWorkerWritesTheStoredWeightsAndPausesIntoEveryPartition() async throws {
        try await withRedisServer { server in
            let prefix = String(uniqueKeyPrefix("fairstart").dropLast())
            let one = ["--redis-url", server.url, "--queue-prefix", prefix, "--partitions", "1"]
            let kekFile = try await Self.kekFile(server)
            let created = try await AppsCommandTests.run(
                ["apps", "create", "shop", "--weight", "3", "--max-in-flight", "7"] + one + ["--kek-file", kekFile.path],
                server: server, name: "create")
            #expect(created.status == 0, "\(created.output)")
            // Paused while the deployment had one partition: the record keeps it.
            let paused = try await AppsCommandTests.run(["apps", "pause", "shop"] + one, server: server, name: "pause")
            #expect(paused.status == 0, "\(paused.output)")
            let redis = RedisConnectionPool(configuration: server.configuration, size: 1)
            let stored = try await RedisAppStore(redis: redis, keys: AppKeys(prefix: prefix), ring: nil).summary(id: try AppID("shop"))
            #expect(stored?.paused == true)
            let added = JobQueueConfiguration(prefix: prefix, partition: "q1").schedulerKey
            #expect(try await redis.send("HMGET", added, "w:shop", "c:shop", "x:shop").array?.map(\.string) == [nil, nil, nil])
            let worker = try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "worker", "--redis-url", server.url, "--queue-prefix", prefix, "--partitions", "2", "--adapter", "simulated",
                    "--log-level", "warning",
                    "--metrics-port", "0",
                ], logFile: server.directory.appendingPathComponent("worker.log"))
            try await waitUntil(timeout: .seconds(60), "the worker to write shop's weight and pause into q1") {
                let fields = try await redis.send("HMGET", added, "w:shop", "c:shop", "x:shop").array?.map(\.string)
                return fields?.prefix(2) == ["3", "7"] && fields?.last != nil
            }
            // Running (its signal handlers set) once its metrics server listens: then SIGTERM is a clean stop.
            try await waitUntil(timeout: .seconds(60), "the worker to run") { worker.log.contains("metrics listening on") }
            worker.signal(SIGTERM)
            #expect(try await worker.wait(timeout: .seconds(30)) == 0, "\(worker.log)")
            await redis.close()
        }
    }

    /// A new key-encryption key (`apps new-kek`) in a file of the server's directory.
    static func kekFile(_ server: RedisServer) async throws -> URL {
        let kek = try await AppsCommandTests.run(["apps", "new-kek"], server: server, name: "kek")
        let file = server.directory.appendingPathComponent("kek")
        try Data(kek.output.utf8).write(to: file)
        return file
    }

    @Test func badValuesAreRefusedWithTheirBounds() async throws {
        try await withRedisServer { server in
            let common = ["--redis-url", server.url, "--queue-prefix", String(uniqueKeyPrefix("fairbad").dropLast())]
            let cases: [([String], String)] = [
                (["--weight", "0"], "--weight: weight must be an integer from 1 to 1000"),
                (["--weight", "1001"], "1 to 1000"),
                (["--max-in-flight", "0"], "--max-in-flight: '0' is not a number from 1 to 1000000, nor `none`"),
                (["--max-in-flight", "lots"], "'lots' is not a number"),
            ]
            for (index, (flags, words)) in cases.enumerated() {
                let refused = try await AppsCommandTests.run(
                    ["apps", "set", "default"] + flags + common, server: server, name: "bad\(index)")
                #expect(refused.status != 0 && refused.output.contains(words), "\(flags): \(refused.output)")
            }
            let shown = try await AppsCommandTests.run(["apps", "show", "default"] + common, server: server, name: "show")
            #expect(shown.output.contains("\"weight\" : 1"), "\(shown.output)")
        }
    }

    /// The JSON object in a command's output (its log may hold other lines).
    static func jsonText(_ output: String) -> String {
        guard let start = output.firstIndex(of: "{"), let end = output.lastIndex(of: "}") else { return output }
        return String(output[start...end])
    }
}
