import AsyncHTTPClient
import Foundation
import NIOCore
import RedisTestSupport
import Synchronization

/// Creates many notifications through `POST /api/notifications` over pooled keep-alive
/// connections, as a client of the API would: each with its own Idempotency-Key, sent again
/// with the same key after a 503 (Redis busy, a failover, too few replicas) until it is accepted,
/// and after a 429 of the user's quota once its Retry-After has passed (the per-user bucket lets
/// 100 through at once, then 10 a second: 240 sends back to back meet it).
struct BulkSender {
    let pipeline: Pipeline
    var user = "root"
    var concurrency = 16

    /// Creates `count` notifications, number `i` to `target(i)`; returns the accepted ids by
    /// number and how many 503s were met on the way.
    func send(
        _ count: Int, target: @escaping @Sendable (Int) -> String, retryFor: Duration = .seconds(90)
    ) async throws -> (ids: [Int], unavailable: Int) {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(5), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)))
        let progress = Progress(count: count)
        let authorization = "Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString()
        let url = pipeline.baseURL.appendingPathComponent("api/notifications").absoluteString
        let key = UUID().uuidString.prefix(8)
        do {
            try await withThrowingDiscardingTaskGroup { group in
                for _ in 0..<self.concurrency {
                    group.addTask {
                        while true {
                            let index = progress.next.add(1, ordering: .relaxed).oldValue
                            guard index < count else { return }
                            let body = try JSONSerialization.data(withJSONObject: [
                                "message": "n\(index)", "richType": "text", "payload": "p\(index)", "target": target(index),
                            ])
                            let deadline = ContinuousClock.now + retryFor
                            while true {
                                var request = HTTPClientRequest(url: url)
                                request.method = .POST
                                request.headers.add(name: "Authorization", value: authorization)
                                request.headers.add(name: "Content-Type", value: "application/json")
                                request.headers.add(name: "Idempotency-Key", value: "\(key)-\(index)")
                                request.body = .bytes(ByteBuffer(bytes: body))
                                let answer: (status: Int, body: [UInt8], retryAfter: Int?)
                                do {
                                    let response = try await client.execute(request, timeout: .seconds(30))
                                    answer = (
                                        Int(response.status.code), Array(buffer: try await response.body.collect(upTo: 1 << 20)),
                                        response.headers.first(name: "Retry-After").flatMap(Int.init)
                                    )
                                } catch {
                                    answer = (0, Array("\(error)".utf8), nil)
                                }
                                if answer.status == 202,
                                    let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
                                    let id = (object["id"] as? String).flatMap(Int.init)
                                {
                                    progress.ids.withLock { $0[index] = id }
                                    break
                                }
                                // 409 idempotency_key_in_use: an earlier try's claim is still pending (its
                                // release met the failover too); the API says to retry after it, as here.
                                let keyInUse =
                                    answer.status == 409 && String(decoding: answer.body, as: UTF8.self).contains("idempotency_key_in_use")
                                if keyInUse, ContinuousClock.now < deadline {
                                    try await Task.sleep(for: .milliseconds(500))
                                    continue
                                }
                                // The user's quota: its bucket refills; the key was released, so the same
                                // request is sent again once Retry-After has passed.
                                let overQuota =
                                    answer.status == 429 && String(decoding: answer.body, as: UTF8.self).contains("\"quota_exceeded\"")
                                if overQuota, let seconds = answer.retryAfter, ContinuousClock.now + .seconds(seconds) < deadline {
                                    try await Task.sleep(for: .seconds(max(seconds, 1)))
                                    continue
                                }
                                guard answer.status == 503 || answer.status == 0, ContinuousClock.now < deadline else {
                                    throw RedisServerError(
                                        "notification \(index): HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
                                    )
                                }
                                progress.unavailable.add(1, ordering: .relaxed)
                                try await Task.sleep(for: .milliseconds(200))
                            }
                        }
                    }
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return (progress.ids.withLock { $0 }, progress.unavailable.load(ordering: .relaxed))
    }
}

/// What the sending tasks share.
private final class Progress: Sendable {
    let ids: Mutex<[Int]>
    let unavailable = Atomic<Int>(0)
    let next = Atomic<Int>(0)

    init(count: Int) {
        ids = Mutex([Int](repeating: 0, count: count))
    }
}
