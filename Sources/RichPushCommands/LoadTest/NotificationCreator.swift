import AsyncHTTPClient
import Foundation
package import NIOCore
import NIOHTTP1
import RichPushCore
package import RichPushStorage
import Synchronization

/// How the load test creates a notification: as a user does (`POST /api/notifications`, or many
/// at once with `POST /api/notifications/batch`) or straight through the store (record, payload
/// and job in Redis, no HTTP).
package protocol NotificationCreator: Sendable {
    /// Creates notification number `index` for `target` (a tag); its id.
    func create(index: Int, target: String) async throws -> Int
    /// Notifications the load test hands to one call of ``create(_:)``.
    var batchSize: Int { get }
    /// Creates the notifications `items` (number and target each); their ids, in order.
    func create(_ items: [(index: Int, target: String)]) async throws -> [Int]
    /// Answers that said "not now" (503) and were sent again after their Retry-After.
    var retried: Int { get }
    func shutdown() async
}

extension NotificationCreator {
    package var batchSize: Int { 1 }

    package func create(_ items: [(index: Int, target: String)]) async throws -> [Int] {
        var ids: [Int] = []
        for item in items { ids.append(try await create(index: item.index, target: item.target)) }
        return ids
    }
}

/// Through the store, as the API would after parsing (the load test's old, HTTP-free path).
package struct StoreCreator: NotificationCreator {
    package let store: RedisNotificationStore
    package let user: String
    package let payload: [UInt8]

    package func create(index: Int, target: String) async throws -> Int {
        let draft = NotificationDraft(
            message: "load \(index)", richType: .image, contentType: "image/png", payload: payload, creator: user, target: target)
        return try await store.create(draft) { _ in "load-payload" }.id
    }

    package var retried: Int { 0 }
    package func shutdown() async {}
}

/// `POST /api/notifications` over a pool of keep-alive connections, authenticated with an API
/// key (`Authorization: Bearer`) or Basic, with the same 1 KiB image as the store path (base64 in
/// JSON). A 503 (the backlog guard, Redis busy) is sent again after its `Retry-After`, as a
/// well-behaved client does; anything else that is not 202 fails the run.
package final class APICreator: NotificationCreator {
    private let api: LoadAPIClient
    private let unavailable = Atomic<Int>(0)

    package init(baseURL: String, authorization: String, payload: [UInt8], connections: Int) {
        api = LoadAPIClient(baseURL: baseURL, authorization: authorization, payload: payload, connections: connections)
    }

    package var retried: Int { unavailable.load(ordering: .relaxed) }

    package func create(index: Int, target: String) async throws -> Int {
        let body = api.notificationJSON(index: index, target: target)
        while true {
            let (response, answer) = try await api.post("/api/notifications", body: body, timeout: .seconds(30), limit: 64 * 1024)
            switch response.status.code {
            case 202:
                guard let id = Self.id(in: answer) else {
                    throw CLIError("POST /api/notifications: 202 without an id: \(String(buffer: answer))")
                }
                return id
            case 503:
                unavailable.add(1, ordering: .relaxed)
                let wait = response.headers.first(name: "Retry-After").flatMap(Double.init) ?? 1
                try await Task.sleep(for: .milliseconds(Int(min(max(wait, 0.05), 30) * 1000)))
            default:
                throw CLIError("POST /api/notifications answered \(response.status.code): \(String(buffer: answer).prefix(300))")
            }
        }
    }

    /// The `"id":"123"` of a create's answer, without decoding the whole object.
    package static func id(in body: ByteBuffer) -> Int? {
        let text = String(buffer: body)
        guard let range = text.range(of: #""id":""#) else { return nil }
        return Int(text[range.upperBound...].prefix { $0 != "\"" })
    }

    package func shutdown() async {
        await api.shutdown()
    }
}
