import Foundation
import RichPushCore
import RichPushHTTP2

extension WebPushPushAdapter {
    /// Sends over HTTP/2, one batch per push service origin on that origin's connections (its
    /// VAPID token, the same for the batch, as the connection's authorization): the messages are
    /// encrypted first, on one task per core.
    func sendOverHTTP2(_ pushes: [OutgoingPush], connections: WebPushConnections) async throws -> [PushOutcome] {
        var outcomes = [PushOutcome?](repeating: nil, count: pushes.count)
        var byOrigin: [String: [(index: Int, request: WebPushRequest, subscription: WebPushSubscription)]] = [:]
        // One task per core, each a share of the batch: a task per push cost more than its work.
        let tasks = max(1, min(ProcessInfo.processInfo.activeProcessorCount, pushes.count))
        await withTaskGroup(of: [(Int, Result<(WebPushRequest, WebPushSubscription), WebPushPrepareFailure>)].self) { group in
            for first in 0..<tasks {
                group.addTask { stride(from: first, to: pushes.count, by: tasks).map { index in (index, self.prepare(pushes[index])) } }
            }
            for await share in group {
                for (index, prepared) in share {
                    switch prepared {
                    case .success(let (request, subscription)):
                        byOrigin[subscription.origin, default: []].append((index, request, subscription))
                    case .failure(let failure): outcomes[index] = failure.outcome
                    }
                }
            }
        }
        var reachedAny = byOrigin.isEmpty
        var lastFailure = ""
        await withTaskGroup(of: [(Int, WebPushAnswer)].self) { group in
            for (origin, batch) in byOrigin {
                group.addTask { await self.send(batch.map { ($0.index, $0.request) }, to: origin, connections: connections) }
            }
            for await answers in group {
                for (index, answer) in answers {
                    outcomes[index] = answer.outcome
                    if answer.reached { reachedAny = true } else { lastFailure = answer.outcome.reason }
                }
            }
        }
        guard reachedAny else { throw WebPushUnreachable(message: lastFailure) }
        return outcomes.map { $0 ?? .failed(reason: "not sent", retryable: true) }
    }

    /// One origin's batch on its client; each request's outcome.
    private func send(_ batch: [(Int, WebPushRequest)], to origin: String, connections: WebPushConnections) async -> [(Int, WebPushAnswer)]
    {
        let client: HTTP2Client
        do {
            client = try connections.client(for: origin)
        } catch {
            return batch.map {
                ($0.0, WebPushAnswer(.failed(reason: "cannot reach the push service \(origin): \(error)", retryable: true), reached: false))
            }
        }
        // What this push service already asked: nothing to a gone or held subscription, nothing
        // at all while it holds itself.
        var answers: [(Int, WebPushAnswer)] = []
        var batch = batch
        batch.removeAll { index, request in
            guard let stop = memory.stop(request.endpoint, origin: origin) else { return false }
            answers.append((index, WebPushAnswer(stop.outcome)))
            return true
        }
        guard !batch.isEmpty else { return answers }
        // The VAPID token is the origin's: the same on every request of the batch.
        let authorization = batch.first?.1.header("Authorization") ?? ""
        let requests = batch.map { _, request in
            HTTP2Request(
                path: Self.path(of: request.endpoint),
                headers: request.headers.filter { $0.name.lowercased() != "authorization" }.map { header in
                    // TTL and Topic vary per message; the rest repeat and index well.
                    HTTP2Request.Header(
                        name: header.name.lowercased(), value: header.value,
                        indexing: ["ttl", "topic"].contains(header.name.lowercased()) ? .firstTimeOnly : .always)
                },
                body: request.body, recipient: request.endpoint)
        }
        // As each request is written: a subscription answered 404/410 or 429, or the service
        // answered 503 with Retry-After, in this batch or another, stops what has not gone out.
        let backoffs = memory.backoffs(for: origin)
        let halt = HTTP2Halt(
            when: { status, retryAfter, _ in status == 503 && HTTP2Backoffs.seconds(retryAfter) != nil },
            recipientGone: { status, _ in status == 404 || status == 410 }, gone: memory.gone,
            recipientThrottled: { status, retryAfter, _ in
                status == 429 ? HTTP2Backoffs.seconds(retryAfter) ?? WebPushServiceAnswer.defaultBackOff : nil
            },
            backoffs: backoffs, tripWait: WebPushServiceAnswer.defaultBackOff)
        let exchanges = await client.send(requests, authorization: authorization, halt: halt)
        return answers
            + zip(batch, exchanges).map { item, exchange in
                switch halt.stopped(exchange, recipient: item.1.endpoint) {
                case .recipientGone: return (item.0, WebPushAnswer(WebPushStop.gone.outcome))
                case .recipientHeld(let wait): return (item.0, WebPushAnswer(WebPushStop.subscriptionHeld(wait).outcome))
                case .tripped:
                    return (
                        item.0,
                        WebPushAnswer(WebPushStop.serviceHeld(backoffs.providerRemaining ?? WebPushServiceAnswer.defaultBackOff).outcome)
                    )
                case nil: break
                }
                switch exchange {
                case let .answered(status, location, retryAfter, body):
                    return (
                        item.0,
                        WebPushAnswer(WebPushServiceAnswer(status: status, location: location, retryAfter: retryAfter, body: body).outcome)
                    )
                case .unprocessed(let reason), .failed(let reason):
                    return (
                        item.0,
                        WebPushAnswer(
                            .failed(reason: "the push service \(origin) did not answer: \(reason)", retryable: true), reached: false)
                    )
                case .timedOut:
                    return (
                        item.0,
                        WebPushAnswer(.failed(reason: "the push service \(origin) did not answer in time", retryable: true), reached: false)
                    )
                }
            }
    }

    /// The endpoint's path and query: what follows its authority.
    static func path(of endpoint: String) -> String {
        guard let scheme = endpoint.range(of: "://") else { return "/" }
        let rest = endpoint[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let path = String(rest[slash...])
        return path.hasPrefix("?") ? "/" + path : path
    }
}
