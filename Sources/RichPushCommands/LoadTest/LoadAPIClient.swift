import AsyncHTTPClient
import Foundation
import NIOCore

/// What the load test's API creators share: keep-alive connections to the API, the caller's
/// `Authorization`, and the 1 KiB image every notification carries (base64 in JSON).
struct LoadAPIClient: Sendable {
    private let client: HTTPClient
    private let baseURL: String
    private let authorization: String
    private let payloadBase64: String

    init(baseURL: String, authorization: String, payload: [UInt8], connections: Int) {
        // A connection may take as long as a request may (30 s), not AsyncHTTPClient's 10 s: an
        // API on a busy machine accepted later than that, and the run failed before it began
        // (getConnectionFromPoolTimeout, LoadReportTests at a load average of 14).
        client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                timeout: .init(connect: .seconds(30)),
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)))
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.authorization = authorization
        payloadBase64 = Data(payload).base64EncodedString()
    }

    /// Notification number `index` to `target`, as a create's JSON. Tags and the message are ours
    /// ([a-z0-9-] and digits): no JSON escaping needed.
    func notificationJSON(index: Int, target: String) -> String {
        #"{"message":"load \#(index)","richType":"img","payload":"\#(payloadBase64)","target":"\#(target)"}"#
    }

    /// Bytes a batch of `count` notifications takes, about.
    func batchCapacity(_ count: Int) -> Int { count * (payloadBase64.utf8.count + 96) }

    /// POSTs `body` (JSON) to `path` (`/api/…`); the answer and up to `limit` bytes of its body.
    func post(_ path: String, body: String, timeout: TimeAmount, limit: Int) async throws -> (HTTPClientResponse, ByteBuffer) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: timeout)
        return (response, try await response.body.collect(upTo: limit))
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
