import Foundation
package import Hiredis
package import RichPushQueue

/// A diagnostic handler for smoke tests and the queue's own tests: it records each run in Redis
/// (`HINCRBY <key> <field> 1`), so a test can see that every job ran exactly once, and it can be
/// told to sleep, fail a number of times, or fail for good.
///
/// Payload (JSON): `{"key": "...", "field": "...", "sleepMs": 0, "failTimes": 0, "permanent": false}`.
package struct ProbeJobHandler: JobHandler {
    package static let type = "probe"

    package struct Payload: Codable, Sendable {
        package var key: String
        package var field: String
        package var sleepMs: Int?
        package var failTimes: Int?
        package var permanent: Bool?

        package init(key: String, field: String, sleepMs: Int? = nil, failTimes: Int? = nil, permanent: Bool? = nil) {
            self.key = key
            self.field = field
            self.sleepMs = sleepMs
            self.failTimes = failTimes
            self.permanent = permanent
        }

        package var bytes: [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data()) }
    }

    private let redis: any RedisClient

    package init(redis: any RedisClient) {
        self.redis = redis
    }

    package func handle(_ job: Job) async throws {
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: Data(job.payload))
        } catch {
            throw JobError.permanent("probe payload is not valid JSON: \(error)")
        }
        if let sleep = payload.sleepMs, sleep > 0 { try await Task.sleep(for: .milliseconds(sleep)) }
        if payload.permanent == true { throw JobError.permanent("probe asked to fail permanently") }
        if let failTimes = payload.failTimes, job.attempt < failTimes {
            throw JobError.retry("probe failure \(job.attempt + 1) of \(failTimes)", after: .milliseconds(10))
        }
        try await redis.send("HINCRBY", payload.key, payload.field, 1)
    }
}
