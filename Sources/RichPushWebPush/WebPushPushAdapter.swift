package import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
package import RichPushCore

/// Sends rendered pushes to browsers' push services (RFC 8030): each message encrypted to its
/// subscription (RFC 8291), with the app's VAPID token for the endpoint's origin (RFC 8292, one
/// token per origin, cached), over the pooled connections of one HTTP client (HTTP/1.1 or HTTP/2,
/// as the service offers).
package struct WebPushPushAdapter: PushAdapter {
    package let name = "webpush"
    let http: HTTPClient
    /// When set, pushes go over HTTP/2 on these connections (one client per origin); else over
    /// `http` (HTTP/1.1 or HTTP/2, as AsyncHTTPClient negotiates).
    let connections: WebPushConnections?
    let vapid: VAPIDSigner
    let timeout: Duration
    /// Requests one `send` has in flight at once.
    let concurrency: Int
    /// What the push services said of subscriptions and of themselves, for every batch.
    let memory = WebPushServiceMemory()

    package init(
        http: HTTPClient, connections: WebPushConnections? = nil, vapid: VAPIDSigner, timeout: Duration = .seconds(10),
        concurrency: Int = 128
    ) {
        self.http = http
        self.connections = connections
        self.vapid = vapid
        self.timeout = timeout
        self.concurrency = max(1, concurrency)
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        if let connections { return try await sendOverHTTP2(pushes, connections: connections) }
        var outcomes = [PushOutcome?](repeating: nil, count: pushes.count)
        var reachedAny = pushes.isEmpty
        var lastFailure = ""
        await withTaskGroup(of: (Int, WebPushAnswer).self) { group in
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask { (index, await self.sendOne(pushes[index])) }
            }
            while next < min(concurrency, pushes.count) { start() }
            for await (index, answer) in group {
                outcomes[index] = answer.outcome
                if answer.reached { reachedAny = true } else { lastFailure = answer.outcome.reason }
                if next < pushes.count { start() }
            }
        }
        // Nothing reached any push service: the job is retried as a whole.
        guard reachedAny else { throw WebPushUnreachable(message: lastFailure) }
        return outcomes.map { $0 ?? .failed(reason: "not sent", retryable: true) }
    }

    /// One push: its outcome, and whether a push service answered (else the network failed).
    /// The push's request, encrypted and signed, or why it cannot be sent at all.
    func prepare(_ push: OutgoingPush) -> Result<(WebPushRequest, WebPushSubscription), WebPushPrepareFailure> {
        guard let keys = push.installation.webPushKeys else {
            return .failure(WebPushPrepareFailure(reason: "the registration has no subscription keys"))
        }
        do {
            let subscription = try WebPushSubscription(endpoint: push.installation.handle, p256dh: keys.p256dh, auth: keys.auth)
            let remaining = max(0, push.rendered.deadline - Int64(Date().timeIntervalSince1970 * 1000))
            let template = WebPushRequest.Template(
                ttl: .milliseconds(remaining),
                urgency: push.rendered.urgency.flatMap(WebPushUrgency.init(rawValue:)) ?? (push.rendered.priority >= 10 ? .high : .normal),
                collapseID: push.rendered.collapseID.isEmpty ? nil : push.rendered.collapseID)
            return .success((try template.request(payload: push.rendered.payload, to: subscription, vapid: vapid), subscription))
        } catch {
            // A subscription or payload no push service would take: not worth a retry.
            return .failure(WebPushPrepareFailure(reason: "\(error)"))
        }
    }

    func sendOne(_ push: OutgoingPush) async -> WebPushAnswer {
        let request: WebPushRequest
        let origin: String
        switch prepare(push) {
        case .success(let (prepared, subscription)): (request, origin) = (prepared, subscription.origin)
        case .failure(let failure): return WebPushAnswer(failure.outcome)
        }
        if let stop = memory.stop(request.endpoint, origin: origin) { return WebPushAnswer(stop.outcome) }
        var outgoing = HTTPClientRequest(url: request.endpoint)
        outgoing.method = .POST
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        do {
            let response = try await http.execute(outgoing, timeout: .milliseconds(Int64(timeout.milliseconds)))
            let body = try await response.body.collect(upTo: 8 * 1024)
            let answer = WebPushServiceAnswer(
                status: Int(response.status.code), location: response.headers.first(name: "Location"),
                retryAfter: response.headers.first(name: "Retry-After"), body: Array(buffer: body))
            memory.learn(from: answer, endpoint: request.endpoint, origin: origin)
            return WebPushAnswer(answer.outcome, reached: true)
        } catch {
            return WebPushAnswer(
                .failed(reason: "cannot reach the push service for \(Self.origin(of: request.endpoint)): \(error)", retryable: true),
                reached: false)
        }
    }

    static func origin(of endpoint: String) -> String {
        URL(string: endpoint).map { "\($0.scheme ?? "https")://\($0.host ?? "?")" } ?? "?"
    }
}

/// One push's outcome and whether a push service answered it.
struct WebPushAnswer: Sendable {
    let outcome: PushOutcome
    let reached: Bool

    init(_ outcome: PushOutcome, reached: Bool = true) {
        self.outcome = outcome
        self.reached = reached
    }
}

/// Why a push cannot be sent at all (no keys, a subscription or payload no service takes): it
/// fails for good.
struct WebPushPrepareFailure: Error {
    let reason: String
    var outcome: PushOutcome { .failed(reason: reason, retryable: false) }
}

/// No push service answered any push of a batch.
struct WebPushUnreachable: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension PushOutcome {
    var reason: String {
        switch self {
        case .sent, .held: ""
        case .invalidToken(let reason), .failed(let reason, _), .failedRetryAfter(let reason, _), .deferred(let reason, _),
            .deviceDeferred(let reason, _):
            reason
        }
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
