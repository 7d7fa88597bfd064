import Foundation
public import RichPushCore
import Synchronization

/// Sends pushes to APNs (or a local `richpush apns-sim`) through an ``APNSClient``: each push
/// becomes an ``APNSRequest`` (refused before sending when Apple would refuse it), goes out with
/// the fleet's shared provider token, and Apple's answer becomes an outcome: sent, invalid token
/// (only for a registration older than Apple's timestamp), permanent failure, or retryable
/// failure. A token Apple rejects is replaced once and the push tried again. When no push of a
/// batch reaches APNs at all, `send` throws, so the job backs off as a whole.
public struct APNSPushAdapter: PushAdapter {
    public let name = "apns"
    let client: APNSClient
    let topic: String
    let token: APNSSharedToken
    let concurrency: Int

    /// `concurrency`: requests of one batch in flight at once (the client spreads them over its
    /// connections, each within the server's stream limit).
    public init(client: APNSClient, topic: String, token: APNSSharedToken, concurrency: Int = 1000) {
        self.client = client
        self.topic = topic
        self.token = token
        self.concurrency = max(1, concurrency)
    }

    /// One push's ending, and whether it got an answer from APNs at all.
    private struct Delivery: Sendable {
        var outcome: PushOutcome
        var reachedAPNs: Bool
        var attempted: Bool
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let bearer = try await token.current()
        let deliveries = await inLanes(pushes) { push in await deliver(push, bearer: bearer) }
        let attempted = deliveries.filter(\.attempted)
        if !attempted.isEmpty, !attempted.contains(where: \.reachedAPNs), case .failed(let reason, _) = attempted[0].outcome {
            throw APNSUnreachable(reason: reason)
        }
        return deliveries.map(\.outcome)
    }

    /// Runs `body` for every push with at most `concurrency` at once, results in order.
    private func inLanes(_ pushes: [OutgoingPush], _ body: @escaping @Sendable (OutgoingPush) async -> Delivery) async -> [Delivery] {
        let cursor = Cursor()
        return await withTaskGroup(of: [(Int, Delivery)].self) { group in
            for _ in 0..<min(concurrency, pushes.count) {
                group.addTask {
                    var done: [(Int, Delivery)] = []
                    while true {
                        let index = cursor.next()
                        guard index < pushes.count else { return done }
                        done.append((index, await body(pushes[index])))
                    }
                }
            }
            var deliveries = [Delivery](repeating: Delivery(outcome: .failed(reason: "not sent", retryable: true), reachedAPNs: false, attempted: false),
                                        count: pushes.count)
            for await lane in group {
                for (index, delivery) in lane { deliveries[index] = delivery }
            }
            return deliveries
        }
    }

    private func deliver(_ push: OutgoingPush, bearer: String) async -> Delivery {
        let request: APNSRequest
        do throws(APNSRejection) {
            request = try APNSRequest(push: push, topic: topic)
        } catch {
            return Delivery(outcome: .failed(reason: "never sent: \(error)", retryable: false), reachedAPNs: false, attempted: false)
        }
        var exchange = await client.send(request, bearer: bearer)
        var action = Self.action(for: exchange)
        if case .refreshToken(let reason) = action {
            // Once: a fresh token from the fleet's store, then the same push again.
            do {
                let fresh = try await token.replace(rejected: bearer)
                exchange = await client.send(request, bearer: fresh)
                action = Self.action(for: exchange)
            } catch {
                return Delivery(outcome: .failed(reason: "\(reason.rawValue); no new provider token: \(error)", retryable: true),
                                reachedAPNs: true, attempted: true)
            }
        }
        let reached = if case .answered = exchange { true } else { false }
        let outcome: PushOutcome = switch action {
        case .sent(let apnsID):
            .sent(adapterID: apnsID.isEmpty ? request.apnsID : apnsID)
        case .unregistered(let since, let reason):
            // A device that registered again after Apple's timestamp keeps its registration.
            if let since, Double(push.installation.updatedAt) / 1000 > since.timeIntervalSince1970 {
                .failed(reason: "\(reason.rawValue) at \(since), but the registration is newer", retryable: false)
            } else {
                .invalidToken(reason: reason.rawValue)
            }
        case .permanent(let reason):
            .failed(reason: reason.rawValue, retryable: false)
        case .retry(let reason, _), .refreshToken(let reason):
            .failed(reason: reason.rawValue, retryable: true)
        }
        return Delivery(outcome: outcome, reachedAPNs: reached, attempted: true)
    }

    static func action(for exchange: APNSExchange) -> APNSAction {
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

/// Hands out 0, 1, 2, … to the lanes of one batch.
private final class Cursor: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

/// No push of a batch reached APNs: the job is retried as a whole, after back-off.
public struct APNSUnreachable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "APNs unreachable: \(reason)" }
}
