import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushQueue
import Synchronization
import Testing

@testable import Hiredis

/// An app's weight and cap on jobs in flight through `/api/apps`: stored on the app, written into
/// every queue partition, and felt by the workers' take; bad values named.
@Suite("App routes: weight and max in flight")
struct AppSchedulingRoutesTests {
    /// Takes one job at a time from `queue`, acknowledging each; the apps in the order taken.
    static func takeOneByOne(_ queue: JobQueue, _ count: Int) async throws -> [String] {
        var order: [String] = []
        for _ in 0..<count {
            guard let job = try await queue.take(for: "c", count: 1, quantum: 1).first.map({ try $0.get() }) else { break }
            order.append(job.app ?? "?")
            try await queue.acknowledge([(job.id, job.inFlightApp)])
        }
        return order
    }

    static func jobs(_ app: String, _ count: Int) -> [JobRequest] {
        (0..<count).map { JobRequest(type: "probe", payload: Array("\(app)-\($0)".utf8), app: app) }
    }

    @Test func aPatchedWeightAndCapReachTheTake() async throws {
        try await withRedisServer { server in
            let fixture = try await AppRoutesTests.fixture(server)
            let queue = JobQueue(redis: fixture.redis, configuration: fixture.queue)
            try await queue.ensureGroup()
            try await fixture.test { client in
                let created = try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "shop", "weight": 2])
                #expect(
                    created.status == .created && created.json["weight"] as? Int == 2 && created.json["maxInFlight"] == nil,
                    "\(created.json)")
                // All of news's jobs arrive first; shop gets two of every three takes all the same.
                try await queue.enqueue(Self.jobs("news", 20))
                try await queue.enqueue(Self.jobs("shop", 20))
                let order = try await Self.takeOneByOne(queue, 15)
                #expect(order.filter { $0 == "shop" }.count == 10, "\(order)")

                // A cap: shop has at most 3 in flight, whatever its weight.
                let capped = try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["maxInFlight": 3])
                #expect(
                    capped.status == .ok && capped.json["weight"] as? Int == 2 && capped.json["maxInFlight"] as? Int == 3, "\(capped.json)")
                let shown = try await AppRoutesTests.send(client, .get, "/api/apps/shop")
                #expect(shown.json["weight"] as? Int == 2 && shown.json["maxInFlight"] as? Int == 3)
                let taken = try await queue.take(for: "c", count: 12).map { try $0.get() }
                #expect(taken.filter { $0.app == "shop" }.count == 3 && taken.count == 12, "\(taken.map(\.app))")
                try await queue.acknowledge(taken.map { ($0.id, $0.inFlightApp) })

                // null removes the cap and keeps the weight.
                let uncapped = try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["maxInFlight": NSNull()])
                #expect(uncapped.status == .ok && uncapped.json["maxInFlight"] == nil && uncapped.json["weight"] as? Int == 2)
                let fields = try await fixture.redis.send("HMGET", fixture.queue.schedulerKey, "w:shop", "c:shop").array?.map(\.string)
                #expect(fields == ["2", nil])
                // Weight 1 again: nothing of shop's is left in the scheduler's hash.
                #expect(try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["weight": 1]).json["weight"] as? Int == 1)
                #expect(try await fixture.redis.send("HEXISTS", fixture.queue.schedulerKey, "w:shop").int == 0)
            }
        }
    }

    @Test func badValuesAreRefusedAndChangeNothing() async throws {
        try await withRedisServer { server in
            let fixture = try await AppRoutesTests.fixture(server)
            try await fixture.test { client in
                #expect(
                    try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "shop", "weight": 4, "maxInFlight": 10]).status
                        == .created)
                let cases: [(String, [String: Any], String, String)] = [
                    ("weight 0", ["weight": 0], "invalid_weight", "weight must be an integer from 1 to 1000"),
                    ("weight too large", ["weight": 1001], "invalid_weight", "1 to 1000"),
                    ("weight as text", ["weight": "3"], "invalid_weight", "weight"),
                    ("weight fractional", ["weight": 2.5], "invalid_weight", "weight"),
                    ("weight null", ["weight": NSNull()], "invalid_weight", "weight"),
                    (
                        "cap 0", ["maxInFlight": 0], "invalid_max_in_flight",
                        "maxInFlight must be an integer from 1 to 1000000, or none (null)"
                    ),
                    ("cap negative", ["maxInFlight": -5, "name": "Renamed"], "invalid_max_in_flight", "maxInFlight"),
                    ("cap as text", ["maxInFlight": "none"], "invalid_max_in_flight", "null"),
                ]
                for (name, object, code, words) in cases {
                    let response = try await AppRoutesTests.send(client, .patch, "/api/apps/shop", object)
                    #expect(
                        response.status == .unprocessableContent && response.errorCode == code && response.errorMessage.contains(words),
                        "\(name): \(response.status) \(response.errorCode ?? "-") \(response.errorMessage)")
                }
                let refusedCreate = try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "news", "weight": -1])
                #expect(refusedCreate.status == .unprocessableContent && refusedCreate.errorCode == "invalid_weight")
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/news").status == .notFound)
                let shown = try await AppRoutesTests.send(client, .get, "/api/apps/shop")
                #expect(
                    shown.json["weight"] as? Int == 4 && shown.json["maxInFlight"] as? Int == 10 && shown.json["name"] as? String == "shop")
                let fields = try await fixture.redis.send("HMGET", fixture.queue.schedulerKey, "w:shop", "c:shop").array?.map(\.string)
                #expect(fields == ["4", "10"])
            }
        }
    }

    @Test func onlyTheOperatorMovesAnAppsShare() async throws {
        try await withRedisServer { server in
            let fixture = try await AppRoutesTests.fixture(server)
            let manage = try await KeyRightsTests.key(fixture, "root", [.manage])
            try await fixture.test { client in
                let refused = try await AppRoutesTests.send(client, .patch, "/api/apps/default", ["weight": 50], headers: manage)
                #expect(refused.status == .forbidden && refused.errorCode == "operator_only", "\(refused.errorMessage)")
                #expect(try await AppRoutesTests.send(client, .patch, "/api/apps/default", ["weight": 5]).json["weight"] as? Int == 5)
                #expect(try await fixture.redis.send("HGET", fixture.queue.schedulerKey, "w:default").string == "5")
            }
        }
    }

    @Test func aFailedWriteToTheQueueIsAnsweredAndTheSameRequestFinishesIt() async throws {
        try await withRedisServer { server in
            let fixture = try await AppRoutesTests.fixture(server)
            let failing = SchedulerFailingRedis(base: fixture.redis)
            try await fixture.test(on: failing) { client in
                #expect(try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "shop"]).status == .created)
                failing.failing.withLock { $0 = true }
                let failed = try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["weight": 7])
                #expect(failed.status == .serviceUnavailable && failed.errorCode == "scheduling_not_applied", "\(failed.status)")
                #expect(
                    failed.errorMessage.contains("stored") && failed.errorMessage.contains("weight 7")
                        && failed.errorMessage.contains("again"),
                    "\(failed.errorMessage)")
                // Stored, not yet in the queue: what GET says is what the operator asked for.
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/shop").json["weight"] as? Int == 7)
                #expect(try await fixture.redis.send("HGET", fixture.queue.schedulerKey, "w:shop").string == nil)
                failing.failing.withLock { $0 = false }
                #expect(try await AppRoutesTests.send(client, .patch, "/api/apps/shop", ["weight": 7]).status == .ok)
                #expect(try await fixture.redis.send("HGET", fixture.queue.schedulerKey, "w:shop").string == "7")
            }
        }
    }

    /// A removed app leaves no weight, cap or pause in the queue (an app made later under the same
    /// id starts at weight 1, unpaused; a paused app's leftover jobs do not wait unseen). The
    /// queue is told first: when that fails, the app stays and the same DELETE finishes the job.
    @Test func aRemovedAppLeavesNoWeightCapOrPauseBehind() async throws {
        try await withRedisServer { server in
            let fixture = try await AppRoutesTests.fixture(server)
            let failing = SchedulerFailingRedis(base: fixture.redis)
            try await fixture.test(on: failing) { client in
                #expect(
                    try await AppRoutesTests.send(client, .post, "/api/apps", ["id": "shop", "weight": 3, "maxInFlight": 9]).status
                        == .created)
                _ = try await fixture.redis.send("HSET", fixture.queue.schedulerKey, "x:shop", 1)  // paused, as the pause script marks it
                failing.failing.withLock { $0 = true }
                let failed = try await AppRoutesTests.send(client, .delete, "/api/apps/shop")
                #expect(
                    failed.status == .serviceUnavailable && failed.errorCode == "scheduling_not_cleared"
                        && failed.headers[.retryAfter] == "1",
                    "\(failed.status) \(failed.errorMessage)")
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/shop").status == .ok)
                failing.failing.withLock { $0 = false }
                #expect(try await AppRoutesTests.send(client, .delete, "/api/apps/shop").status == .noContent)
                let left = try await fixture.redis.send("HMGET", fixture.queue.schedulerKey, "w:shop", "c:shop", "x:shop").array ?? []
                #expect(left.count == 3 && left.allSatisfy(\.isNull), "\(left)")
                #expect(try await AppRoutesTests.send(client, .get, "/api/apps/shop").status == .notFound)
            }
        }
    }
}

final class SchedulerFailingRedis: RedisClient {
    let base: any RedisClient
    let failing = Mutex(false)

    init(base: any RedisClient) { self.base = base }

    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        if failing.withLock({ $0 }), commands.contains(where: { ["HSET", "HDEL"].contains($0.name) && $0.description.contains(":sched") }) {
            throw RedisError(code: .connectionFailed, message: "the test's Redis went away")
        }
        return try await base.pipeline(commands)
    }
}
