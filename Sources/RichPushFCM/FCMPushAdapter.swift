package import RichPushCore
package import RichPushHTTP2

/// Sends pushes to FCM HTTP v1 (`POST /v1/projects/{project}/messages:send` on
/// fcm.googleapis.com, or a local `richpush fcm-sim`) over HTTP/2 with the fleet's shared access
/// token: one batch of streams per call on ``HTTP2Client``'s connections, as many in flight as
/// the server allows. A push's rendering is the notification's ``FCMMessage`` without the token
/// (`RenderedPush.payload`); each device's request adds its registration token. FCM's answer
/// becomes an outcome: sent, invalid token (`UNREGISTERED`), permanent failure, or retryable
/// failure (with FCM's `Retry-After` when it gives one); a refused access token is replaced once
/// for the whole batch.
///
/// Back-pressure is a deferral, never a failure: the project's `QUOTA_EXCEEDED` holds the
/// project (``ProviderPause``, shared by the fleet through Redis) until FCM's `Retry-After`, at
/// least a minute without one, as Firebase asks; it stops the rest of the batch at the first such
/// answer, and while the hold lasts every push comes back `deferred` without a request. A
/// device's own quota defers that device's push only. When not one push of a batch reaches FCM,
/// `send` throws ``FCMUnreachable`` and the job backs off as a whole.
package struct FCMPushAdapter: PushAdapter {
    package let name = "fcm"
    let client: HTTP2Client
    let path: String
    let token: FCMAccessToken
    /// The project's hold after `QUOTA_EXCEEDED`.
    package let pause: ProviderPause
    /// Registration tokens an `UNREGISTERED` declared dead, for every batch of this process at once.
    let gone = HTTP2GoneRecipients()
    /// What FCM asked this process to wait for (the project, single tokens), honoured by every
    /// batch as each request is written.
    let backoffs = HTTP2Backoffs()

    static let contentType = HTTP2Request.Header(name: "content-type", value: "application/json; charset=UTF-8")

    /// `client`: connections to FCM's endpoint (the caller runs it in its `ServiceGroup`).
    /// `holds`: where the fleet shares the project's hold (nil: this process only).
    package init(client: HTTP2Client, projectID: String, token: FCMAccessToken, holds: (any ProviderPauses)? = nil) {
        self.client = client
        path = "/v1/projects/\(projectID)/messages:send"
        self.token = token
        pause = ProviderPause(scope: "fcm:\(projectID)", shared: holds)
    }

    /// The access token, fetched or exchanged now if need be. A failure is left for `send`, which
    /// asks again and reports it for its pushes.
    package func prepare() async {
        do {
            _ = try await token.current()
        } catch {}
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        if let wait = try await pause.remaining() ?? backoffs.providerRemaining {
            return Array(repeating: Self.held(wait), count: pushes.count)
        }
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        var requests: [HTTP2Request] = []
        var positions: [Int] = []
        requests.reserveCapacity(pushes.count)
        positions.reserveCapacity(pushes.count)
        for (position, push) in pushes.enumerated() {
            do throws(FCMRejection) {
                let body = try FCMMessage(rest: push.rendered.payload).body(token: push.installation.handle)
                requests.append(HTTP2Request(path: path, headers: [Self.contentType], body: body, recipient: push.installation.handle))
                positions.append(position)
            } catch {
                outcomes[position] = .failed(reason: "never sent: \(error)", retryable: false)
            }
        }
        guard !requests.isEmpty else { return outcomes }

        let bearer = try await token.current()
        // The first answer that holds the project stops what has not gone out yet, and an
        // UNREGISTERED stops what this process has not sent yet to that token, a device's quota
        // what it has not sent yet to that device until the wait is over.
        let halt = HTTP2Halt(
            when: FCMResponse.holdsProject, recipientGone: FCMResponse.isUnregistered, gone: gone,
            recipientThrottled: { status, retryAfter, body in
                FCMResponse.holdsDevice(status: status, retryAfter: retryAfter, body: body, wait: Self.quotaHold)
            },
            backoffs: backoffs, tripWait: Self.quotaHold)
        var exchanges = await client.send(requests, authorization: "Bearer " + bearer, halt: halt)
        // An access token FCM refused (expired, revoked): one new token for the fleet, and those
        // pushes once more.
        let refused = exchanges.indices.filter { if case .refreshToken = Self.action(for: exchanges[$0]) { true } else { false } }
        if !refused.isEmpty {
            do {
                let fresh = try await token.replace(rejected: bearer)
                let again = await client.send(refused.map { requests[$0] }, authorization: "Bearer " + fresh, halt: halt)
                for (index, exchange) in zip(refused, again) { exchanges[index] = exchange }
            } catch {
                for index in refused {
                    exchanges[index] = .failed(reason: "FCM refused the access token and no new one could be had: \(error)")
                }
            }
        }
        if !exchanges.contains(where: { if case .answered = $0 { true } else { false } }), let first = exchanges.first {
            throw FCMUnreachable(reason: "\(first)")
        }
        let actions = exchanges.map(Self.action(for:))
        // The project's quota: the longest Retry-After of the batch holds the fleet (one write).
        var projectWait: Duration?
        for case .throttled(_, let after) in actions { projectWait = max(projectWait ?? .zero, after ?? Self.quotaHold) }
        if let projectWait { await pause.pause(for: projectWait) }
        for (index, (exchange, action)) in zip(exchanges, actions).enumerated() {
            outcomes[positions[index]] =
                switch halt.stopped(exchange, recipient: requests[index].recipient) {
                // FCM just declared the token dead: the job comes back in a moment and the fleet's
                // record, judged against this registration's time, decides.
                case .recipientGone: .deferred(reason: "not sent: FCM answered UNREGISTERED for this token moments ago", after: .seconds(1))
                // FCM asked to slow down for this device (in this batch or another).
                case .recipientHeld(let wait):
                    .deviceDeferred(reason: "not sent: FCM's quota for this device is used up; again in \(wait)", after: wait)
                // Stopped by a quota answer (this batch's or another's).
                case .tripped: Self.held(pause.remainingHere ?? projectWait ?? backoffs.providerRemaining ?? Self.quotaHold)
                case nil: Self.outcome(of: action)
                }
        }
        return outcomes
    }

    /// How long FCM is held after `QUOTA_EXCEEDED` without a `Retry-After`: Firebase asks for
    /// back-off "with a minimum initial delay of 1 minute".
    static let quotaHold = Duration.seconds(60)

    static func held(_ wait: Duration) -> PushOutcome {
        .deferred(reason: "FCM quota exceeded for the project; sending again in \(wait)", after: wait)
    }

    static func outcome(of action: FCMAction) -> PushOutcome {
        switch action {
        case .sent(let messageID): return .sent(adapterID: messageID)
        case .unregistered(let reason): return .invalidToken(reason: reason)
        case .permanent(let reason): return .failed(reason: reason, retryable: false)
        case .throttled(let reason, let after): return .deferred(reason: reason, after: after ?? quotaHold)
        case .deviceThrottled(let reason, let after): return .deviceDeferred(reason: reason, after: after ?? quotaHold)
        case .retry(let reason, let after?): return .failedRetryAfter(reason: reason, after: after)
        case .retry(let reason, nil), .refreshToken(let reason): return .failed(reason: reason, retryable: true)
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

/// No push of a batch reached FCM: the job is retried as a whole, after back-off.
package struct FCMUnreachable: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { "FCM unreachable: \(reason)" }
}
