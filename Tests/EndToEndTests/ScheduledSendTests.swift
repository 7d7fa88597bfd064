import Foundation
import FoundationNetworking
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

/// `sendAt` and `DELETE /api/notifications/{id}` through the API, a worker and a device: a
/// scheduled notification waits in Redis and fires, never early; a cancelled one is never
/// delivered; a delivered one cannot be cancelled. (How late it fires is a benchmark's business:
/// a loaded test machine says nothing about it.)
@Suite("Scheduled send and cancel")
struct ScheduledSendTests {
    static func call(
        _ pipeline: Pipeline, _ method: String, _ path: String, user: String = "alice"
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: pipeline.baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    @Test func aScheduledNotificationFiresNotBeforeItsTimeACancelledOneNever() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                try await withSimulator(simulator) { log in
                    try await withWorker(pipeline.worker()) {
                        // Both due in 30 s (the second as RFC 3339); the second is cancelled at once (30 s:
                        // a loaded machine has taken more than 6 s, and once more than 12 s, between the
                        // create and the cancel, and a cancel that comes after the job was read cannot
                        // stop that send).
                        let sendAt = JobQueue.nowMilliseconds() + 30_000
                        let scheduled = try await pipeline.send(json: [
                            "message": "later", "richType": "text", "payload": "p", "sendAt": sendAt,
                        ])
                        let formatter = ISO8601DateFormatter()
                        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                        let cancelled = try await pipeline.send(json: [
                            "message": "never", "richType": "text", "payload": "p",
                            "sendAt": formatter.string(from: Date(timeIntervalSince1970: Double(sendAt) / 1000)),
                        ])
                        let cancel = try await Self.call(pipeline, "DELETE", "api/notifications/\(cancelled)")
                        #expect(cancel.status == 200 && cancel.json["state"] as? String == "cancelled" && cancel.json["sent"] as? Int == 0)
                        if JobQueue.nowMilliseconds() < sendAt - 500 {
                            #expect(try await pipeline.status(scheduled)["state"] as? String == "scheduled")
                        }
                        try await waitUntil(timeout: .seconds(60), "the scheduled push") { log.count("received") >= 1 }
                        // Never early (what the device saw, against the time asked for).
                        let received = try #require(log.all.first { $0.event == "received" })
                        #expect(received.richId == String(scheduled) && (received.at ?? 0) >= sendAt * 1000)
                        // Both jobs left the delayed set and were handled: the cancelled one sent nothing.
                        try await waitUntil(timeout: .seconds(30), "both jobs to be handled") {
                            let delayed = try await pipeline.redis.send("ZCARD", pipeline.queue.configuration.delayedKey).int ?? -1
                            let stats = try await pipeline.queue.stats()
                            return delayed == 0 && stats.waiting == 0 && stats.lag == 0 && stats.pending == 0
                        }
                        #expect(log.all.filter { $0.event == "received" }.map(\.richId) == [String(scheduled)])
                        let status = try await pipeline.status(cancelled)
                        #expect(status["state"] as? String == "cancelled" && (status["counts"] as? [String: Int])?["sent"] == 0)
                        // Sent: too late to cancel.
                        try await waitUntil(timeout: .seconds(60), "the scheduled one to be sent") {
                            try await pipeline.status(scheduled)["state"] as? String != "scheduled"
                        }
                        let tooLate = try await Self.call(pipeline, "DELETE", "api/notifications/\(scheduled)")
                        #expect(tooLate.status == 409 && (tooLate.json["error"] as? [String: Any])?["code"] as? String == "already_sent")
                    }
                }
            }
        }
    }
}

extension ScheduledSendTests {
    /// The schedule lives in Redis, not in a process: created with no worker running, it fires
    /// on time from a worker started later (as after every process was restarted).
    @Test func theScheduleOutlivesTheProcesses() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let simulator = try pipeline.simulator(tap: .none)
                try await withSimulator(simulator) { log in
                    // 10 s ahead: a create delayed past its sendAt is queued at once, not scheduled,
                    // and a busy machine once stalled this one's POST for more than 6 s.
                    let sendAt = JobQueue.nowMilliseconds() + 10_000
                    let id = try await pipeline.send(json: ["message": "later", "richType": "text", "payload": "p", "sendAt": sendAt])
                    // No worker runs yet, so nothing takes it out of the schedule: if the create
                    // answered before its time, it is there (after its time, it may rightly not be).
                    if JobQueue.nowMilliseconds() < sendAt {
                        #expect(try await pipeline.redis.send("ZCARD", pipeline.queue.configuration.delayedKey).int == 1)
                    }
                    try await Task.sleep(for: .milliseconds(1000))
                    try await withWorker(pipeline.worker()) {
                        try await waitUntil(timeout: .seconds(30), "the scheduled push") { log.count("received") == 1 }
                        let received = try #require(log.all.first { $0.event == "received" })
                        #expect(received.richId == String(id) && (received.at ?? 0) >= sendAt * 1000, "not before its time")
                    }
                }
            }
        }
    }
}
