public import RichPushCore
public import RichPushHTTP2

/// Sends pushes to FCM HTTP v1 (`POST /v1/projects/{project}/messages:send` on
/// fcm.googleapis.com, or a local `richpush fcm-sim`) over HTTP/2 with the fleet's shared access
/// token: one batch of streams per call on ``HTTP2Client``'s connections, as many in flight as
/// the server allows. A push's rendering is the notification's ``FCMMessage`` without the token
/// (`RenderedPush.payload`); each device's request adds its registration token. FCM's answer
/// becomes an outcome: sent, invalid token (`UNREGISTERED`), permanent failure, or retryable
/// failure; a refused access token is replaced once for the whole batch; `QUOTA_EXCEEDED` holds
/// every send of this adapter until FCM's `Retry-After` (at least a minute without one), since
/// the quota is the project's, not the device's. When not one push of a batch reaches FCM,
/// `send` throws ``FCMUnreachable`` and the job backs off as a whole.
public struct FCMPushAdapter: PushAdapter {
    public let name = "fcm"
    let client: HTTP2Client
    let path: String
    let token: FCMAccessToken
    let throttle: FCMThrottle

    static let contentType = HTTP2Request.Header(name: "content-type", value: "application/json; charset=UTF-8")

    /// `client`: connections to FCM's endpoint (the caller runs it in its `ServiceGroup`).
    public init(client: HTTP2Client, projectID: String, token: FCMAccessToken, throttle: FCMThrottle = FCMThrottle()) {
        self.client = client
        path = "/v1/projects/\(projectID)/messages:send"
        self.token = token
        self.throttle = throttle
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        if let wait = throttle.remaining() {
            throw FCMQuotaExceeded(retryAfter: wait)
        }
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        var requests: [HTTP2Request] = []
        var positions: [Int] = []
        requests.reserveCapacity(pushes.count)
        positions.reserveCapacity(pushes.count)
        for (position, push) in pushes.enumerated() {
            do throws(FCMRejection) {
                let body = try FCMMessage(rest: push.rendered.payload).body(token: push.installation.handle)
                requests.append(HTTP2Request(path: path, headers: [Self.contentType], body: body))
                positions.append(position)
            } catch {
                outcomes[position] = .failed(reason: "never sent: \(error)", retryable: false)
            }
        }
        guard !requests.isEmpty else { return outcomes }

        let bearer = try await token.current()
        var exchanges = await client.send(requests, authorization: "Bearer " + bearer)
        // An access token FCM refused (expired, revoked): one new token for the fleet, and those
        // pushes once more.
        let refused = exchanges.indices.filter { if case .refreshToken = Self.action(for: exchanges[$0]) { true } else { false } }
        if !refused.isEmpty {
            do {
                let fresh = try await token.replace(rejected: bearer)
                let again = await client.send(refused.map { requests[$0] }, authorization: "Bearer " + fresh)
                for (index, exchange) in zip(refused, again) { exchanges[index] = exchange }
            } catch {
                for index in refused { exchanges[index] = .failed(reason: "FCM refused the access token and no new one could be had: \(error)") }
            }
        }
        if !exchanges.contains(where: { if case .answered = $0 { true } else { false } }), let first = exchanges.first {
            throw FCMUnreachable(reason: "\(first)")
        }
        for (index, exchange) in exchanges.enumerated() {
            outcomes[positions[index]] = outcome(of: Self.action(for: exchange))
        }
        return outcomes
    }

    private func outcome(of action: FCMAction) -> PushOutcome {
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

    static func action(for exchange: HTTP2Exchange) -> FCMAction {
        switch exchange {
        case .answered(let status, _, let retryAfter, let body):
            FCMResponse.action(status: status, body: body, retryAfter: retryAfter)
        case .unprocessed(let reason), .failed(let reason):
            .retry(reason: "no answer: \(reason)", after: nil)
        case .timedOut:
            .retry(reason: "no answer within the request timeout", after: nil)
        }
    }
}

/// FCM said the project's quota is used up: nothing is sent until `retryAfter` has passed.
public struct FCMQuotaExceeded: Error, CustomStringConvertible {
    public let retryAfter: Duration
    public var description: String { "FCM quota exceeded; sending again in \(retryAfter)" }
}

/// No push of a batch reached FCM: the job is retried as a whole, after back-off.
public struct FCMUnreachable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "FCM unreachable: \(reason)" }
}
