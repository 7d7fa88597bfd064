import AsyncHTTPClient
import Foundation
import NIOCore
import RichPushCore
import Synchronization

/// `POST /api/notifications/batch` over a pool of keep-alive connections: the load test's items
/// go `batchSize` to a request, each with the same 1 KiB image as the other paths. The items the
/// answer says "not now" (429, 503: the quota, Redis busy) are sent again, in a batch of their
/// own, after the longest `retryAfter` among them, and the whole batch after a 503 for the whole
/// request; any other refusal fails the run. Each item's id comes from its own result, so the
/// tracker counts lost and duplicated pushes per notification as with one create per request.
package final class BatchAPICreator: NotificationCreator {
    package let batchSize: Int
    private let api: LoadAPIClient
    private let unavailable = Atomic<Int>(0)

    package init(baseURL: String, authorization: String, payload: [UInt8], connections: Int, batchSize: Int) {
        api = LoadAPIClient(baseURL: baseURL, authorization: authorization, payload: payload, connections: connections)
        self.batchSize = batchSize
    }

    /// Items sent again after a "not now".
    package var retried: Int { unavailable.load(ordering: .relaxed) }

    package func create(index: Int, target: String) async throws -> Int {
        try await create([(index, target)])[0]
    }

    package func create(_ items: [(index: Int, target: String)]) async throws -> [Int] {
        var ids = [Int?](repeating: nil, count: items.count)
        var waiting = Array(items.indices)
        while !waiting.isEmpty {
            let (response, answer) = try await post(waiting.map { items[$0] })
            guard response.status.code == 200 else {
                guard response.status.code == 503 else {
                    throw CLIError("POST /api/notifications/batch answered \(response.status.code): \(String(buffer: answer).prefix(300))")
                }
                unavailable.add(waiting.count, ordering: .relaxed)
                try await pause(response.headers.first(name: "Retry-After").flatMap(Double.init) ?? 1)
                continue
            }
            guard case .array(let results)? = JSONValue.parse(Array(buffer: answer))?["results"], results.count == waiting.count else {
                throw CLIError("POST /api/notifications/batch: 200 without one result per item: \(String(buffer: answer).prefix(300))")
            }
            var again: [Int] = []
            var wait = 0.0
            for (slot, result) in zip(waiting, results) {
                switch result["httpStatus"]?.int {
                case 202:
                    guard let id = result["id"]?.string.flatMap(Int.init) else { throw CLIError("batch item 202 without an id: \(result)") }
                    ids[slot] = id
                case 429, 503:
                    again.append(slot)
                    wait = max(wait, Double(result["retryAfter"]?.int ?? 1))
                default:
                    throw CLIError("POST /api/notifications/batch refused item \(items[slot].index): \(result)")
                }
            }
            if !again.isEmpty {
                unavailable.add(again.count, ordering: .relaxed)
                try await pause(wait)
            }
            waiting = again
        }
        return ids.compactMap { $0 }
    }

    private func post(_ items: [(index: Int, target: String)]) async throws -> (HTTPClientResponse, ByteBuffer) {
        var body = #"{"notifications":["#
        body.reserveCapacity(api.batchCapacity(items.count))
        for (position, item) in items.enumerated() {
            if position > 0 { body += "," }
            body += api.notificationJSON(index: item.index, target: item.target)
        }
        body += "]}"
        return try await api.post("/api/notifications/batch", body: body, timeout: .seconds(60), limit: 8 << 20)
    }

    private func pause(_ seconds: Double) async throws {
        try await Task.sleep(for: .milliseconds(Int(min(max(seconds, 0.05), 30) * 1000)))
    }

    package func shutdown() async {
        await api.shutdown()
    }
}
