package import AsyncHTTPClient
import Foundation
import Hiredis
import NIOCore
import NIOHTTP1

/// How the dispatcher POSTs a delivery; the answer is a status or why none came.
package protocol WebhookTransport: Sendable {
    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async -> WebhookResponse
}

package struct WebhookResponse: Sendable, Hashable {
    /// Nil when no HTTP answer came (refused, reset, timed out, bad URL).
    package var status: Int?
    package var error: String?

    package init(status: Int?, error: String?) {
        self.status = status
        self.error = error
    }

    package var isSuccess: Bool { (200...299).contains(status ?? 0) }
}

/// POSTs over AsyncHTTPClient (HTTP/1.1 keep-alive or HTTP/2, TLS by the system's roots).
/// Redirects are not followed (a 3xx is a failure), and only the first 1 KiB of an answer is read.
package struct HTTPWebhookTransport: WebhookTransport {
    let client: HTTPClient

    package init(client: HTTPClient) {
        self.client = client
    }

    /// The client configuration the dispatcher expects: no redirects, `connections` per host, and
    /// a connection that cannot be made fails its attempt at once. (AsyncHTTPClient's default
    /// tries to connect again until its 10 s connect timeout: a receiver that refuses connections
    /// then cost 10 s of a delivery slot per attempt. The dispatcher's retries, with their
    /// backoff and window, are the retries.)
    package static func configuration(connections: Int) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, connections))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        return configuration
    }

    package func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async -> WebhookResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(timeout.milliseconds)))
            var excerpt: [UInt8] = []
            for try await chunk in response.body where excerpt.count < 1024 {
                excerpt += chunk.readableBytesView.prefix(1024 - excerpt.count)
            }
            let status = Int(response.status.code)
            guard (200...299).contains(status) else {
                let text = String(decoding: excerpt, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                let location = response.headers.first(name: "location").map { " (redirects are not followed: \($0))" } ?? ""
                return WebhookResponse(
                    status: status, error: "HTTP \(status)\(location)\(text.isEmpty ? "" : ": " + String(text.prefix(200)))")
            }
            return WebhookResponse(status: status, error: nil)
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return WebhookResponse(status: nil, error: "no answer within \(timeout.components.seconds) s")
        } catch {
            return WebhookResponse(status: nil, error: "\(error)")
        }
    }
}
