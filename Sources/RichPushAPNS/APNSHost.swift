import RichPushCore
import RichPushHTTP2

/// One of Apple's two push services (production or sandbox) as ``APNSPushAdapter`` sends to it:
/// its own connections, its own hold and its own memory of the device tokens it declared dead.
/// The services are separate: a 429 from one holds nothing of the other, and a 410 speaks for a
/// token of that service. The provider token is the team's, the same for both.
struct APNSHost: Sendable {
    let environment: APNSEnvironment
    let client: HTTP2Client
    let token: APNSSharedToken
    let concurrency: Int
    /// This service's hold after a 429 with `Retry-After`, shared by the fleet.
    let pause: ProviderPause
    /// Device tokens a 410 declared dead, for every batch of this process at once.
    let gone = HTTP2GoneRecipients()
    /// What APNs asked this process to wait for (the sender, single device tokens), honoured by
    /// every batch as each request is written.
    let backoffs = HTTP2Backoffs()
    let throttleWait: Duration

    /// The hold's scope: production keeps the name it had before there were two services
    /// (`apns:<topic>`), so a fleet being upgraded still shares one hold.
    static func pauseApp(_ environment: APNSEnvironment, topic: String) -> String {
        environment == .production ? "apns:\(topic)" : "apns-\(environment.rawValue):\(topic)"
    }

    static func held(_ wait: Duration) -> PushOutcome {
        .deferred(reason: "APNs asked this sender to wait; sending again in \(wait)", after: wait)
    }

    static let deadMomentsAgo = PushOutcome.deferred(
        reason: "not sent: APNs answered Unregistered for this device token moments ago", after: .seconds(1))

    /// Sends requests already checked against Apple's rules (`pushes` are what they were made
    /// from, in the same order) and returns each one's outcome. Throws when not one reached APNs.
    func send(_ requests: [APNSRequest], for pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        if let wait = try await pause.remaining() ?? backoffs.providerRemaining {
            return Array(repeating: Self.held(wait), count: requests.count)
        }
        let bearer = try await token.current()
        // ... a 410 stops the batch's other pushes to that device token, and a 429 for one
        // device token every batch's pushes to it until the wait is over.
        let wait = throttleWait
        let halt = HTTP2Halt(
            when: APNSResponse.holdsSender, recipientGone: { status, _ in status == 410 }, gone: gone,
            recipientThrottled: { status, retryAfter, body in
                APNSResponse.holdsDevice(status: status, retryAfter: retryAfter, body: body, wait: wait)
            },
            backoffs: backoffs, tripWait: throttleWait)
        var exchanges = await inChunks(requests) { chunk in await client.send(chunk, bearer: bearer, halt: halt) }
        // A provider token APNs refused: one fresh token from the fleet's store, and those pushes once more.
        let refused = exchanges.indices.filter {
            if case .refreshToken = APNSPushAdapter.action(for: exchanges[$0]) { true } else { false }
        }
        if !refused.isEmpty {
            do {
                let fresh = try await token.replace(rejected: bearer)
                let again = await inChunks(refused.map { requests[$0] }) { chunk in await client.send(chunk, bearer: fresh, halt: halt) }
                for (index, exchange) in zip(refused, again) { exchanges[index] = exchange }
            } catch {
                for index in refused {
                    exchanges[index] = .failed(reason: "APNs refused the provider token and no new one could be made: \(error)")
                }
            }
        }
        if !exchanges.contains(where: { if case .answered = $0 { true } else { false } }), let first = exchanges.first {
            // Not one push reached APNs: the job backs off as a whole.
            throw APNSUnreachable(reason: "\(environment) \(first)")
        }
        let actions = exchanges.map(APNSPushAdapter.action(for:))
        var senderWait: Duration?
        for case .throttled(_, let after) in actions { senderWait = max(senderWait ?? .zero, after ?? throttleWait) }
        if let senderWait { await pause.pause(for: senderWait) }
        return zip(exchanges, actions).enumerated().map { index, answer in
            switch halt.stopped(answer.0, recipient: requests[index].path) {
            // Apple just declared the token dead: the job comes back in a moment and the fleet's
            // record, judged against this registration's time, decides.
            case .recipientGone: Self.deadMomentsAgo
            // APNs asked to slow down for this device token (in this batch or another).
            case .recipientHeld(let wait):
                .deviceDeferred(reason: "not sent: APNs asked to slow down for this device token; again in \(wait)", after: wait)
            // Stopped by a 429 that holds the sender (this batch's or another's).
            case .tripped: Self.held(pause.remainingHere ?? senderWait ?? backoffs.providerRemaining ?? throttleWait)
            case nil: APNSPushAdapter.outcome(of: answer.1, request: requests[index], push: pushes[index], throttleWait: throttleWait)
            }
        }
    }

    /// Sends in chunks of at most `concurrency` requests, several chunks in flight, results in order.
    private func inChunks(
        _ requests: [APNSRequest], _ body: @escaping @Sendable ([APNSRequest]) async -> [HTTP2Exchange]
    ) async -> [HTTP2Exchange] {
        guard requests.count > concurrency else { return await body(requests) }
        let chunks = stride(from: 0, to: requests.count, by: concurrency).map {
            Array(requests[$0..<min($0 + concurrency, requests.count)])
        }
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
}
