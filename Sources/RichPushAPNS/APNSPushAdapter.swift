public import AsyncHTTPClient
import Foundation
import Hiredis
import NIOCore
import NIOHTTP1
public import RichPushCore

/// Sends pushes to APNs (or a local `richpush apns-sim`) over HTTP/2: each push becomes an
/// ``APNSRequest`` (refused before sending when Apple would refuse it), goes out with the fleet's
/// shared provider token, and Apple's answer becomes an outcome: sent, invalid token (only for a
/// registration older than Apple's timestamp), permanent failure, or retryable failure. A token
/// Apple rejects is replaced once and the push tried again.
///
/// async-http-client negotiates HTTP/2 (ALPN `h2`) and keeps to the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS`; requests beyond it wait for a stream.
public struct APNSPushAdapter: PushAdapter {
    public let name = "apns"
    let client: HTTPClient
    let baseURL: String
    let topic: String
    let token: APNSSharedToken
    let timeout: TimeAmount
    let concurrency: Int

    /// `baseURL`: `https://api.push.apple.com`, `https://api.sandbox.push.apple.com`, or a local
    /// server's. `client` is configured by the caller (TLS trust roots for a local CA).
    public init(client: HTTPClient, baseURL: String, topic: String, token: APNSSharedToken, timeout: Duration = .seconds(10), concurrency: Int = 500) {
        self.client = client
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.topic = topic
        self.token = token
        self.timeout = .milliseconds(Int64(timeout.milliseconds))
        self.concurrency = max(1, concurrency)
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let bearer = try await token.current()
        return await withTaskGroup(of: (Int, PushOutcome).self) { group in
            var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
            var next = 0
            func startNext() {
                let index = next
                next += 1
                group.addTask { (index, await self.deliver(pushes[index], bearer: bearer)) }
            }
            for _ in 0..<min(concurrency, pushes.count) { startNext() }
            while let (index, outcome) = await group.next() {
                outcomes[index] = outcome
                if next < pushes.count { startNext() }
            }
            return outcomes
        }
    }

    private func deliver(_ push: OutgoingPush, bearer: String) async -> PushOutcome {
        let request: APNSRequest
        do throws(APNSRejection) {
            // The collapse id is the notification's id: the pair's apns-id derives from it.
            request = try APNSRequest(push: push, notification: Int(push.rendered.collapseID) ?? 0, topic: topic)
        } catch {
            return .failed(reason: "never sent: \(error)", retryable: false)
        }
        var action = await post(request, bearer: bearer)
        if case .refreshToken(let reason) = action {
            // Once: a fresh token from the fleet's store, then the same push again.
            guard let fresh = try? await token.replace(rejected: bearer) else {
                return .failed(reason: "\(reason.rawValue); no new provider token", retryable: true)
            }
            action = await post(request, bearer: fresh)
        }
        switch action {
        case .sent(let apnsID):
            return .sent(adapterID: apnsID.isEmpty ? request.apnsID : apnsID)
        case .unregistered(let since, let reason):
            // A device that registered again after Apple's timestamp keeps its registration.
            if let since, Double(push.installation.updatedAt) / 1000 > since.timeIntervalSince1970 {
                return .failed(reason: "\(reason.rawValue) at \(since), but the registration is newer", retryable: false)
            }
            return .invalidToken(reason: reason.rawValue)
        case .permanent(let reason):
            return .failed(reason: reason.rawValue, retryable: false)
        case .retry(let reason, _), .refreshToken(let reason):
            return .failed(reason: reason.rawValue, retryable: true)
        }
    }

    private func post(_ request: APNSRequest, bearer: String) async -> APNSAction {
        var http = HTTPClientRequest(url: baseURL + request.path)
        http.method = .POST
        http.headers.add(name: "authorization", value: "bearer \(bearer)")
        for header in request.headers { http.headers.add(name: header.name, value: header.value) }
        http.body = .bytes(ByteBuffer(bytes: request.body))
        do {
            let response = try await client.execute(http, timeout: timeout)
            let body = try await response.body.collect(upTo: 16 * 1024)
            return APNSResponse.action(status: Int(response.status.code), body: Array(buffer: body),
                                       apnsID: response.headers.first(name: "apns-id"), retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return .retry(reason: .other("connection: \(error)"), after: nil)
        }
    }
}
