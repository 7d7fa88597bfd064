import Foundation
import Synchronization
public import RichPushCore
public import RichPushHTTP2

/// Sends pushes to APNs (or a local `richpush apns-sim`) through an ``HTTP2Client``: each push
/// becomes an ``APNSRequest`` (refused before sending when Apple would refuse it), goes out with
/// the fleet's shared provider token, and Apple's answer becomes an outcome: sent, invalid token
/// (only for a registration older than Apple's timestamp), permanent failure, or retryable
/// failure (after Apple's `Retry-After` when it gives one). A token Apple rejects is replaced once
/// and the push tried again. When no push of a batch reaches APNs at all, `send` throws, so the
/// job backs off as a whole.
///
/// Back-pressure is a deferral, never a failure: a 429 `TooManyRequests` (too many pushes to one
/// device) defers that push; a 429 with `Retry-After` (or `TooManyProviderTokenUpdates`) holds this
/// sender across the fleet (``ProviderHold``) and stops the rest of the batch, and while the hold
/// lasts every push comes back `deferred` without a request.
public struct APNSPushAdapter: PushAdapter {
    public let name = "apns"
    let client: HTTP2Client
    let topic: String
    let token: APNSSharedToken
    let concurrency: Int
    /// This sender's hold after a 429 with `Retry-After`.
    public let hold: ProviderHold
    /// Device tokens a 410 declared dead, for every batch of this process at once.
    let gone = HTTP2GoneRecipients()

    /// `concurrency`: requests of one batch in flight at once (the client spreads them over its
    /// connections, each within the server's stream limit). `holds`: where the fleet shares a
    /// hold on this sender (nil: this process only).
    public init(client: HTTP2Client, topic: String, token: APNSSharedToken, concurrency: Int = 1000, holds: (any ProviderHolds)? = nil,
                throttleWait: Duration = .seconds(30)) {
        self.throttleWait = throttleWait
        self.client = client
        self.topic = topic
        self.token = token
        self.concurrency = max(1, concurrency)
        hold = ProviderHold(scope: "apns:\(topic)", shared: holds)
    }

    /// How long a push waits after a 429 `TooManyRequests` that names no time, and how long the
    /// sender is held after a `TooManyProviderTokenUpdates` without one (Apple names no time).
    public let throttleWait: Duration

    static let deadMomentsAgo = PushOutcome.deferred(reason: "not sent: APNs answered Unregistered for this device token moments ago", after: .seconds(1))

    static func held(_ wait: Duration) -> PushOutcome {
        .deferred(reason: "APNs asked this sender to wait; sending again in \(wait)", after: wait)
    }

    /// The provider token, made or taken from the fleet now if need be. A failure is left for
    /// `send`, which asks again and reports it for its pushes.
    public func prepare() async {
        do {
            _ = try await token.current()
        } catch {}
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        if let wait = try await hold.remaining() {
            return Array(repeating: Self.held(wait), count: pushes.count)
        }
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        // Check each push as Apple would; what fails is never sent.
        var requests: [APNSRequest] = []
        var positions: [Int] = []
        requests.reserveCapacity(pushes.count)
        var template: (rendered: RenderedPush, checked: Result<APNSRequest.Template, APNSRejection>)?
        for (position, push) in pushes.enumerated() {
            // The pushes of one notification share one rendering: it is checked once.
            if template?.rendered != push.rendered {
                template = (push.rendered, Result { () throws(APNSRejection) in try APNSRequest.Template(rendered: push.rendered, topic: topic) })
            }
            do throws(APNSRejection) {
                requests.append(try template!.checked.get().request(for: push))
                positions.append(position)
            } catch {
                outcomes[position] = .failed(reason: "never sent: \(error)", retryable: false)
            }
        }
        guard !requests.isEmpty else { return outcomes }

        let bearer = try await token.current()
        // ... and a 410 stops the batch's other pushes to that device token.
        let halt = HTTP2Halt(when: APNSResponse.holdsSender, recipientGone: { status, _ in status == 410 }, gone: gone)
        var exchanges = await inChunks(requests) { chunk in await client.send(chunk, bearer: bearer, halt: halt) }
        // A provider token APNs refused: one fresh token from the fleet's store, and those pushes once more.
        let refused = exchanges.indices.filter { if case .refreshToken = Self.action(for: exchanges[$0]) { true } else { false } }
        if !refused.isEmpty {
            do {
                let fresh = try await token.replace(rejected: bearer)
                let again = await inChunks(refused.map { requests[$0] }) { chunk in await client.send(chunk, bearer: fresh, halt: halt) }
                for (index, exchange) in zip(refused, again) { exchanges[index] = exchange }
            } catch {
                for index in refused { exchanges[index] = .failed(reason: "APNs refused the provider token and no new one could be made: \(error)") }
            }
        }
        if !exchanges.contains(where: { if case .answered = $0 { true } else { false } }), let first = exchanges.first {
            // Not one push reached APNs: the job backs off as a whole.
            throw APNSUnreachable(reason: "\(first)")
        }
        let actions = exchanges.map(Self.action(for:))
        var senderWait: Duration?
        for case .throttled(_, let after) in actions { senderWait = max(senderWait ?? .zero, after ?? throttleWait) }
        if let senderWait { await hold.hold(for: senderWait) }
        for (index, (exchange, action)) in zip(exchanges, actions).enumerated() {
            outcomes[positions[index]] = switch halt.stopped(exchange, recipient: requests[index].path) {
            // Apple just declared the token dead: the job comes back in a moment and the fleet's
            // record, judged against this registration's time, decides.
            case .recipientGone: Self.deadMomentsAgo
            // Stopped by the batch's first 429 that holds the sender.
            case .tripped: Self.held(hold.remainingHere ?? senderWait ?? throttleWait)
            case nil: Self.outcome(of: action, request: requests[index], push: pushes[positions[index]], throttleWait: throttleWait)
            }
        }
        return outcomes
    }

    /// Sends in chunks of at most `concurrency` requests, several chunks in flight, results in order.
    private func inChunks(_ requests: [APNSRequest], _ body: @escaping @Sendable ([APNSRequest]) async -> [HTTP2Exchange]) async -> [HTTP2Exchange] {
        guard requests.count > concurrency else { return await body(requests) }
        let chunks = stride(from: 0, to: requests.count, by: concurrency).map { Array(requests[$0..<min($0 + concurrency, requests.count)]) }
        // Each chunk writes its own slot; a discarding group keeps no child results (a task group
        // of tuple results crashed release builds, see RoutedPushAdapter).
        let results = ChunkResults(count: chunks.count)
        await withDiscardingTaskGroup { group in
            for (index, chunk) in chunks.enumerated() {
                group.addTask { results.set(index, await body(chunk)) }
            }
        }
        return results.all
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
        case .throttled(let reason, let after), .deviceThrottled(let reason, let after):
            return .deferred(reason: reason.rawValue, after: after ?? throttleWait)
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
public struct APNSUnreachable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "APNs unreachable: \(reason)" }
}

/// The exchanges of each chunk of one batch, written by the chunks' tasks.
final class ChunkResults: Sendable {
    private let slots: Mutex<[[HTTP2Exchange]]>

    init(count: Int) { slots = Mutex(Array(repeating: [], count: count)) }

    func set(_ index: Int, _ exchanges: [HTTP2Exchange]) { slots.withLock { $0[index] = exchanges } }

    var all: [HTTP2Exchange] { slots.withLock { $0.flatMap { $0 } } }
}
