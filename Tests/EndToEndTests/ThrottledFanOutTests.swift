import Foundation
import FoundationNetworking
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// `throttlePerMinute`: one notification's pushes spread at that rate (so the devices' fetches
/// are too), and a cancel stops a throttled fan-out at its next batch.
@Suite("Throttled fan-out")
struct ThrottledFanOutTests {
    @Test func pushesSpreadAtTheRateAndACancelStopsTheRest() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(devices: 30, tap: .none)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        // 300 a minute: batches of 5, one a second, six of them. The last is due
                        // 5 s after the worker splits the fan-out, so 5 s after the POST at the
                        // earliest (measured from the POST: a late first receipt on a busy machine
                        // would shorten a first-to-last spread, not this).
                        let posted = Int(Date().timeIntervalSince1970 * 1_000_000)
                        let id = try await pipeline.send(json: [
                            "message": "m", "richType": "text", "payload": "p", "throttlePerMinute": 300,
                        ])
                        try await waitUntil(timeout: .seconds(60), "30 devices to get it") {
                            log.all.filter { $0.event == "received" && $0.richId == String(id) }.count == 30
                        }
                        let times = log.all.filter { $0.event == "received" && $0.richId == String(id) }.compactMap(\.at).sorted()
                        let spread = Double((times.last ?? 0) - posted) / 1_000_000
                        #expect(spread >= 4.9, "30 pushes at 300/min take 5 s from the POST; the last came after \(spread) s")
                        // The worker records a batch after its publish: the status may count the
                        // last batch a moment after the devices got it (a busy machine read 25).
                        // A push the hub held (a device's subscription was being re-made on a busy
                        // machine) counts as `held` and reaches the device when it is back: both
                        // are the platform's acceptance, the `sent` state.
                        try await waitUntil(timeout: .seconds(60), "the status to count 30 sent or held") {
                            let counts = try await pipeline.status(id)["counts"] as? [String: Int] ?? [:]
                            return (counts["sent"] ?? 0) + (counts["held"] ?? 0) == 30
                        }

                        // Another one, at 120 a minute (15 batches of 2, one due a second), cancelled
                        // after its first push: the rest never go.
                        let secondPosted = Date()
                        let second = try await pipeline.send(json: [
                            "message": "m2", "richType": "text", "payload": "p", "throttlePerMinute": 120,
                        ])
                        try await waitUntil(timeout: .seconds(30), "the first batch") {
                            log.all.contains { $0.event == "received" && $0.richId == String(second) }
                        }
                        var request = URLRequest(url: pipeline.baseURL.appendingPathComponent("api/notifications/\(second)"))
                        request.httpMethod = "DELETE"
                        request.setValue("Basic " + Data("alice:alice-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
                        let (data, response) = try await URLSession.shared.data(for: request)
                        let cancelledAfter = Date().timeIntervalSince(secondPosted)
                        let answer = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
                        #expect((response as? HTTPURLResponse)?.statusCode == 200 && answer["state"] as? String == "cancelled", "\(answer)")
                        // The worker records a batch after its publish: the first may not be counted yet.
                        let before = answer["sent"] as? Int ?? -1
                        #expect((0..<30).contains(before), "part-way: \(before) sent before the cancel")
                        // Batch k (from 0) is due k seconds after the worker split the fan-out (itself after the
                        // POST), and a job is checked against the cancel when it is taken, once due:
                        // every batch due after the cancel's answer never goes. Those due before may
                        // have gone (several at once when a busy machine took them late together).
                        // Once the queue holds no job at all (waiting, scheduled, delivered or
                        // unacknowledged), nothing more can be sent.
                        try await waitUntil(timeout: .seconds(60), "the cancelled fan-out's jobs to end") {
                            let stats = try await pipeline.queue.stats()
                            return stats.waiting == 0 && stats.delayed == 0 && stats.lag == 0 && stats.pending == 0
                        }
                        let dueBeforeTheCancel = 2 * (Int(cancelledAfter) + 1)
                        // What went out is what the status counts (a device logs a push a moment after
                        // its publish is recorded).
                        try await waitUntil(timeout: .seconds(30), "the devices to get what the status counts") {
                            let counts = try await pipeline.status(second)["counts"] as? [String: Int] ?? [:]
                            let got = log.all.filter { $0.event == "received" && $0.richId == String(second) }.count
                            return got == (counts["sent"] ?? 0) + (counts["held"] ?? 0)
                        }
                        let got = log.all.filter { $0.event == "received" && $0.richId == String(second) }.count
                        #expect(
                            got >= 1 && got <= dueBeforeTheCancel && got < 30,
                            "\(got) received; at most \(dueBeforeTheCancel) pushes were due when the cancel answered after \(cancelledAfter) s"
                        )
                        #expect(try await pipeline.status(second)["state"] as? String == "cancelled")
                        // The first one, all sent: too late.
                        let (_, tooLate) = try await URLSession.shared.data(
                            for: {
                                var again = URLRequest(url: pipeline.baseURL.appendingPathComponent("api/notifications/\(id)"))
                                again.httpMethod = "DELETE"
                                again.setValue(
                                    "Basic " + Data("alice:alice-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
                                return again
                            }())
                        #expect((tooLate as? HTTPURLResponse)?.statusCode == 409)
                    }
                }
            }
        }
    }

    /// The gate behind the spacing, on Redis: batches go out while the notification stays within
    /// its limit over the last minute; one more waits until the oldest leave the minute; a batch
    /// asking again (its retry) is not counted twice; notifications do not share a limit.
    @Test func theMinuteGateAdmitsUpToTheLimitAndSaysHowLongToWait() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let ledger = RedisDeliveryLedger(redis: pipeline.redis, keys: pipeline.keys, retention: .seconds(3600))
                func ask(_ notification: Int, _ batch: String, _ pushes: Int = 20) async throws -> Duration {
                    try await ledger.admitThrottled([
                        ThrottledBatch(notification: notification, batch: batch, pushes: pushes, perMinute: 50)
                    ])[0]
                }
                #expect(try await ask(1, "a") == .zero)
                #expect(try await ask(1, "b") == .zero)
                // Until a's minute ends: the minute less the time since a (seconds on a busy machine).
                let wait = try await ask(1, "c")
                #expect(wait > .seconds(30) && wait <= .seconds(60), "\(wait)")
                #expect(try await ask(1, "a") == .zero, "a batch admitted before is admitted again")
                #expect(try await ask(1, "d", 10) == .zero, "10 more fit the 50")
                #expect(try await ask(2, "c") == .zero, "each notification has its own minute")
                // Several in one call, the same notification twice: the second sees the first.
                let both = try await ledger.admitThrottled([
                    ThrottledBatch(notification: 3, batch: "x", pushes: 30, perMinute: 50),
                    ThrottledBatch(notification: 3, batch: "y", pushes: 30, perMinute: 50),
                ])
                #expect(both[0] == .zero && both[1] > .seconds(30))
                let ttl = try await pipeline.redis.send("PTTL", "\(pipeline.prefix):{q0}:throttle:1").int ?? -2
                #expect((1...61_000).contains(ttl))
            }
        }
    }
}
