public import AsyncHTTPClient
import Foundation
import NIOCore
public import RichPushCore

/// Sends pushes to FCM HTTP v1 (`POST {base}/v1/projects/{project}/messages:send`), or to a local
/// `richpush fcm-sim`, with the fleet's shared access token. A push's rendering is the
/// notification's ``FCMMessage`` without the token (`RenderedPush.payload`); each device's
/// request adds its registration token. FCM's answer becomes an outcome: sent, invalid token
/// (`UNREGISTERED`), permanent failure, or retryable failure; a refused access token is replaced
/// once; `QUOTA_EXCEEDED` holds every send of this adapter until FCM's `Retry-After` (at least a
/// minute without one), since the quota is the project's, not the device's.
public struct FCMPushAdapter: PushAdapter {
    public let name = "fcm"
    let http: HTTPClient
    let sendURL: String
    let token: FCMAccessToken
    let timeout: TimeAmount
    let concurrency: Int
    let throttle: FCMThrottle

    /// `baseURL`: `https://fcm.googleapis.com`, or a local server's.
    public init(http: HTTPClient, baseURL: String, projectID: String, token: FCMAccessToken, timeout: Duration = .seconds(10), concurrency: Int = 200,
                throttle: FCMThrottle = FCMThrottle()) {
        self.http = http
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        sendURL = "\(base)/v1/projects/\(projectID)/messages:send"
        self.token = token
        self.timeout = TimeAmount(timeout)
        self.concurrency = max(1, concurrency)
        self.throttle = throttle
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        if let wait = throttle.remaining() {
            throw FCMQuotaExceeded(retryAfter: wait)
        }
        let bearer = try await token.current()
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        await withTaskGroup(of: (Int, PushOutcome).self) { group in
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask { (index, await deliver(pushes[index], bearer: bearer)) }
            }
            for _ in 0..<min(concurrency, pushes.count) { start() }
            while let (index, outcome) = await group.next() {
                outcomes[index] = outcome
                if next < pushes.count { start() }
            }
        }
        return outcomes
    }

    private func deliver(_ push: OutgoingPush, bearer: String) async -> PushOutcome {
        let body: [UInt8]
        do throws(FCMRejection) {
            body = try FCMMessage(rest: push.rendered.payload).body(token: push.installation.handle)
        } catch {
            return .failed(reason: "never sent: \(error)", retryable: false)
        }
        var action = await post(body, bearer: bearer)
        if case .refreshToken(let reason) = action {
            do {
                action = await post(body, bearer: try await token.replace(rejected: bearer))
            } catch {
                return .failed(reason: "\(reason); no new access token: \(error)", retryable: true)
            }
        }
        switch action {
        case .sent(let messageID): return .sent(adapterID: messageID)
        case .unregistered(let reason): return .invalidToken(reason: reason)
        case .permanent(let reason): return .failed(reason: reason, retryable: false)
        case .throttled(let reason, let after):
            throttle.hold(for: after ?? .seconds(60))
            return .failed(reason: reason, retryable: true)
        case .retry(let reason, _), .refreshToken(let reason): return .failed(reason: reason, retryable: true)
        }
    }

    private func post(_ body: [UInt8], bearer: String) async -> FCMAction {
        var request = HTTPClientRequest(url: sendURL)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, timeout: timeout)
            let answer = try await response.body.collect(upTo: 64 * 1024)
            return FCMResponse.action(status: Int(response.status.code), body: Array(buffer: answer), retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return .retry(reason: "no answer: \(error)", after: nil)
        }
    }
}

/// FCM said the project's quota is used up: nothing is sent until `retryAfter` has passed.
public struct FCMQuotaExceeded: Error, CustomStringConvertible {
    public let retryAfter: Duration
    public var description: String { "FCM quota exceeded; sending again in \(retryAfter)" }
}
