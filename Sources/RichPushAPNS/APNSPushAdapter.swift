import Foundation
package import RichPushCore
package import RichPushHTTP2
import Synchronization

/// Sends pushes to APNs (or a local `richpush apns-sim`) through an ``HTTP2Client``: each push
/// becomes an ``APNSRequest`` (refused before sending when Apple would refuse it), goes out with
/// the fleet's shared provider token, and Apple's answer becomes an outcome: sent, invalid token
/// (only for a registration older than Apple's timestamp), permanent failure, or retryable
/// failure (after Apple's `Retry-After` when it gives one). A token Apple rejects is replaced once
/// and the push tried again. When no push of a batch reaches APNs at all, `send` throws, so the
/// job backs off as a whole.
///
/// Apple runs two services, production and sandbox, and a device token is valid in one only
/// (``APNSEnvironment``): each push goes to its installation's, production through `client`,
/// sandbox through `sandboxClient` (which opens no connection before its first push). Each
/// service has its own hold and its own dead tokens (``APNSHost``); one that cannot be reached
/// fails only its own pushes.
///
/// Back-pressure is a deferral, never a failure: a 429 `TooManyRequests` (too many pushes to one
/// device) defers that push; a 429 with `Retry-After` (or `TooManyProviderTokenUpdates`) holds this
/// sender's service across the fleet (``ProviderPause``) and stops the rest of the batch, and while
/// the hold lasts every push to that service comes back `deferred` without a request.
package struct APNSPushAdapter: PushAdapter {
    package let name = "apns"
    let topic: String
    let token: APNSSharedToken
    let production: APNSHost
    /// Nil: no sandbox service; a sandbox installation's push fails, unsent, saying so.
    let sandbox: APNSHost?

    /// `client`: connections to the production service; `sandboxClient`: to the sandbox service
    /// (nil: none). `concurrency`: requests of one batch in flight at once per service (the
    /// client spreads them over its connections, each within the server's stream limit).
    /// `holds`: where the fleet shares a hold on each service (nil: this process only).
    package init(
        client: HTTP2Client, sandboxClient: HTTP2Client? = nil, topic: String, token: APNSSharedToken, concurrency: Int = 1000,
        holds: (any ProviderPauses)? = nil, throttleWait: Duration = .seconds(30)
    ) {
        self.throttleWait = throttleWait
        self.topic = topic
        self.token = token
        func host(_ environment: APNSEnvironment, _ client: HTTP2Client) -> APNSHost {
            APNSHost(
                environment: environment, client: client, token: token, concurrency: max(1, concurrency),
                pause: ProviderPause(scope: APNSHost.pauseApp(environment, topic: topic), shared: holds), throttleWait: throttleWait)
        }
        production = host(.production, client)
        sandbox = sandboxClient.map { host(.sandbox, $0) }
    }

    /// How long a push waits after a 429 `TooManyRequests` that names no time, and how long the
    /// sender is held after a `TooManyProviderTokenUpdates` without one (Apple names no time).
    package let throttleWait: Duration

    /// The provider token, made or taken from the fleet now if need be. A failure is left for
    /// `send`, which asks again and reports it for its pushes.
    package func prepare() async {
        do {
            _ = try await token.current()
        } catch {}
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        // Check each push as Apple would; what fails is never sent. The rest go by service.
        var batches: [APNSEnvironment: HostBatch] = [:]
        var template: (rendered: RenderedPush, checked: Result<APNSRequest.Template, APNSRejection>)?
        for (position, push) in pushes.enumerated() {
            // The pushes of one notification share one rendering: it is checked once.
            if template?.rendered != push.rendered {
                template = (
                    push.rendered, Result { () throws(APNSRejection) in try APNSRequest.Template(rendered: push.rendered, topic: topic) }
                )
            }
            do throws(APNSRejection) {
                let request = try template!.checked.get().request(for: push)
                batches[push.installation.apnsEnvironment, default: HostBatch()].add(position, request)
            } catch {
                outcomes[position] = .failed(reason: "never sent: \(error)", retryable: false)
            }
        }
        if let unserved = batches[.sandbox], sandbox == nil {
            for position in unserved.positions {
                outcomes[position] = .failed(
                    reason: "never sent: the device token is APNs sandbox's and no sandbox service is configured", retryable: false)
            }
            batches[.sandbox] = nil
        }
        let work = [production, sandbox].compactMap { host in host.flatMap { host in batches[host.environment].map { (host, $0) } } }
        if work.count == 1, let (host, batch) = work.first {
            let sent = try await host.send(batch.requests, for: batch.positions.map { pushes[$0] })
            for (position, outcome) in zip(batch.positions, sent) { outcomes[position] = outcome }
            return outcomes
        }
        guard !work.isEmpty else { return outcomes }
        // Both services at once. One that cannot be reached fails its own pushes for retry; only
        // when neither can does the batch throw. (A discarding group writing into a Mutex: see
        // RoutedPushAdapter for why not a group of tuple results.)
        let results = HostResults(outcomes)
        await withDiscardingTaskGroup { group in
            for (host, batch) in work {
                let hostPushes = batch.positions.map { pushes[$0] }
                group.addTask {
                    do {
                        results.set(batch.positions, try await host.send(batch.requests, for: hostPushes))
                    } catch {
                        results.fail(batch.positions, error)
                    }
                }
            }
        }
        let (all, failures) = results.state.withLock { ($0.outcomes, $0.failures) }
        if failures.count == work.count, let first = failures.first { throw first }
        return all
    }

    static func outcome(of action: APNSAction, request: APNSRequest, push: OutgoingPush, throttleWait: Duration) -> PushOutcome {
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
        case .throttled(let reason, let after):
            return .deferred(reason: reason.rawValue, after: after ?? throttleWait)
        case .deviceThrottled(let reason, let after):
            return .deviceDeferred(reason: reason.rawValue, after: after ?? throttleWait)
        case .retry(let reason, let after?):
            return .failedRetryAfter(reason: reason.rawValue, after: after)
        case .retry(let reason, nil), .refreshToken(let reason):
            return .failed(reason: reason.rawValue, retryable: true)
        }
    }

    static func action(for exchange: HTTP2Exchange) -> APNSAction {
        switch exchange {
        case .answered(let status, let apnsID, let retryAfter, let body):
            APNSResponse.action(status: status, body: body, apnsID: apnsID, retryAfter: retryAfter)
        case .unprocessed(let reason):
            .retry(reason: .other("not sent: \(reason)"), after: nil)
        case .failed(let reason):
            .retry(reason: .other("no answer: \(reason)"), after: nil)
        case .timedOut:
            .retry(reason: .other("no answer within the request timeout"), after: nil)
        }
    }
}

/// No push of a batch reached APNs: the job is retried as a whole, after back-off.
package struct APNSUnreachable: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { "APNs unreachable: \(reason)" }
}

/// The requests of one batch for one service, and where their pushes are in the batch.
struct HostBatch {
    var positions: [Int] = []
    var requests: [APNSRequest] = []

    mutating func add(_ position: Int, _ request: APNSRequest) {
        positions.append(position)
        requests.append(request)
    }
}

/// What each service's send of one batch reports, each into its own positions.
final class HostResults: Sendable {
    struct State {
        var outcomes: [PushOutcome]
        var failures: [any Error] = []
    }

    let state: Mutex<State>

    init(_ outcomes: [PushOutcome]) { state = Mutex(State(outcomes: outcomes)) }

    func set(_ positions: [Int], _ outcomes: [PushOutcome]) {
        state.withLock { state in for (position, outcome) in zip(positions, outcomes) { state.outcomes[position] = outcome } }
    }

    func fail(_ positions: [Int], _ error: any Error) {
        state.withLock { state in
            state.failures.append(error)
            for position in positions { state.outcomes[position] = .failed(reason: "\(error)", retryable: true) }
        }
    }
}

/// The exchanges of each chunk of one batch, written by the chunks' tasks.
final class ChunkResults: Sendable {
    private let slots: Mutex<[[HTTP2Exchange]]>

    init(count: Int) { slots = Mutex(Array(repeating: [], count: count)) }

    func set(_ index: Int, _ exchanges: [HTTP2Exchange]) { slots.withLock { $0[index] = exchanges } }

    var all: [HTTP2Exchange] { slots.withLock { $0.flatMap { $0 } } }
}
