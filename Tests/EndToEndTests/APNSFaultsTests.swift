import Crypto
import Foundation
import NIOSSL
import PlatformSimTestSupport
import RedisTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import RichPushHTTP2
import RichPushQueue
import RichPushSimTLS
import RichPushStorage
import RichPushWorker
import Synchronization
import Testing

/// The worker's APNs path against an apns-sim that fails as Apple does: dead tokens (410),
/// bad tokens (400), throttling (429) and server errors (500). Every device ends in exactly one
/// documented state, and nothing is sent twice.
@Suite("APNs faults through the worker")
struct APNSFaultsTests {
    @Test func thousandsOfPushesWithDeadAndFailingTokensEndAsApplesAnswersSay() async throws {
        try await withRedisServer { server in
            // Transient failures are retried by the queue: enough attempts that 2 % + 2 % never exhausts them.
            try await Pipeline.start(server: server, retry: RetryPolicy(maxAttempts: 10, base: .milliseconds(10), cap: .milliseconds(100)))
            { pipeline in
                // Enough for every kind of answer many times over (the load is scripts/bench-apns.sh's job).
                let devices = 2_000
                let store = RedisInstallationStore(redis: pipeline.redis, keys: pipeline.keys)
                let tokens = (0..<devices).map { String(format: "%064lx", 0xA000_0000 + $0) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for chunk in stride(from: 0, to: devices, by: 500) {
                        group.addTask {
                            for index in chunk..<min(chunk + 500, devices) {
                                _ = try await store.save(
                                    Installation(
                                        id: "dev\(index)", platform: .apns, handle: tokens[index], tags: ["username:alice"],
                                        owner: "alice", updatedAt: 1000), limits: RegistrationLimits())
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                var faults = APNSFaultPlan()
                faults.failures = try APNSFaultPlan.failures(parsing: "410:5%,400:1%,429:2%,500:2%")
                faults.seed = 7
                let signer = try LocalAPNS.signer()
                // A debug build beside the other suites may answer slowly; a push that times out is
                // retried and may then arrive twice (at least once), which is not what this test is about.
                let apns = try await LocalAPNS.start(faults: faults, timeout: .seconds(120), responseIDHeader: nil)
                // A 429 defers its push (spending no attempt); a second instead of Apple's unnamed wait.
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: apns.client, topic: "com.example.richpush", signer: signer, throttleWait: .seconds(1))
                let id = try await withWorker(pipeline.worker(adapter: .apns(settings), leaseDuration: .seconds(300))) {
                    let id = try await pipeline.send(json: ["message": "to two thousand", "richType": "text", "payload": "hello"])
                    try await waitUntil(timeout: .seconds(240), "every device to end in one state") {
                        let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
                        return (counts["sent"] ?? 0) + (counts["invalidToken"] ?? 0) + (counts["failed"] ?? 0) == devices
                    }
                    return id
                }
                try await apns.stop()

                // What apns-sim answered, per device token.
                var answers: [String: [Int]] = [:]
                for line in apns.lines {
                    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let path = object["path"] as? String, let status = object["status"] as? Int
                    else { continue }
                    answers[String(path.dropFirst("/3/device/".count)), default: []].append(status)
                }
                let dead = Set(answers.filter { $0.value.contains(410) }.keys)
                let bad = Set(answers.filter { $0.value.contains(400) }.keys)
                let served = Set(answers.filter { $0.value.contains(200) }.keys)
                #expect(answers.count == devices)
                #expect(dead.isDisjoint(with: served) && bad.isDisjoint(with: served) && dead.isDisjoint(with: bad))
                #expect(dead.count + bad.count + served.count == devices)
                // Each served device once; dead and bad tokens asked once (never retried); some retried after 429/500.
                #expect(served.allSatisfy { token in answers[token]!.filter { $0 == 200 }.count == 1 })
                #expect(dead.union(bad).allSatisfy { answers[$0]!.count == 1 })
                #expect(answers.values.contains { $0.contains(429) || $0.contains(500) }, "no transient failure was injected")
                #expect((devices * 3 / 100...devices * 7 / 100).contains(dead.count), "410:5% of \(devices) gave \(dead.count)")

                let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
                #expect(
                    counts["sent"] == served.count && counts["invalidToken"] == dead.count && counts["failed"] == bad.count, "\(counts)")
                // The console's failed pushes by reason: each refusal once, with Apple's reason,
                // each 500 answer once (a failed attempt, retried), a 429 not at all (a deferral).
                let flat = try await pipeline.redis.send("HGETALL", pipeline.queue.configuration.failuresKey(app: "default")).array ?? []
                var failures: [String: Int] = [:]
                for index in stride(from: 0, to: flat.count - 1, by: 2) {
                    failures[flat[index].string ?? "?"] = Int(flat[index + 1].string ?? "")
                }
                let serverErrors = answers.values.reduce(0) { $0 + $1.filter { $0 == 500 }.count }
                #expect(
                    failures["Unregistered"] == dead.count && failures["BadDeviceToken"] == bad.count
                        && failures["InternalServerError"] == serverErrors,
                    "\(failures); \(dead.count) dead, \(bad.count) bad, \(serverErrors) 500s")
                #expect(
                    Set(failures.keys).subtracting(["Unregistered", "BadDeviceToken", "InternalServerError", "timeout", "unreachable"])
                        .isEmpty,
                    "\(failures)")
                // Exactly the dead tokens' registrations are gone.
                let left = try await store.installations(ids: (0..<devices).map { "dev\($0)" })
                #expect(Set(left.map(\.handle)) == Set(tokens).subtracting(dead))
            }
        }
    }
}
