package import RichPushCore
import Synchronization

/// Sends each push through the adapter for its installation's platform (FCM for `fcm`, …), or
/// the default one, all routes at once; outcomes come back in the pushes' order. A route that
/// cannot send at all fails its own pushes as retryable, so the others' sends are kept; only when
/// every route fails does `send` throw (the job then backs off as a whole).
package struct RoutedPushAdapter: PushAdapter {
    package let name: String
    let fallback: any PushAdapter
    let routes: [Platform: any PushAdapter]

    package init(fallback: any PushAdapter, routes: [Platform: any PushAdapter]) {
        self.fallback = fallback
        self.routes = routes
        name = ([fallback.name] + routes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value.name)" }).joined(
            separator: "+")
    }

    package func name(for platform: Platform) -> String {
        (routes[platform] ?? fallback).name(for: platform)
    }

    /// Every route prepares, at once.
    package func prepare() async {
        await withDiscardingTaskGroup { group in
            for adapter in [fallback] + Array(routes.values) { group.addTask { await adapter.prepare() } }
        }
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        var groups: [Platform?: [Int]] = [:]
        for (index, push) in pushes.enumerated() {
            let platform = routes[push.installation.platform] == nil ? nil : push.installation.platform
            groups[platform, default: []].append(index)
        }
        if groups.count == 1, let (platform, _) = groups.first {
            return try await (platform.flatMap { routes[$0] } ?? fallback).send(pushes)
        }
        // Each route writes its own indices; a discarding group keeps no child results. (A task
        // group of `([Int], Result<[PushOutcome], any Error>)` results crashed release builds of
        // Swift 6.3.1 in swift_retain when a route finished: 5 of 6 native demos before, 0 of 6 after.)
        let results = RouteResults(count: pushes.count)
        await withDiscardingTaskGroup { group in
            for (platform, indices) in groups {
                let adapter = platform.flatMap { routes[$0] } ?? fallback
                let batch = indices.map { pushes[$0] }
                group.addTask {
                    do {
                        let sent = try await adapter.send(batch)
                        results.state.withLock { state in
                            for (index, outcome) in zip(indices, sent) { state.outcomes[index] = outcome }
                        }
                    } catch {
                        results.state.withLock { state in
                            state.failures.append(error)
                            for index in indices { state.outcomes[index] = .failed(reason: "\(error)", retryable: true) }
                        }
                    }
                }
            }
        }
        let (outcomes, failures) = results.state.withLock { ($0.outcomes, $0.failures) }
        if failures.count == groups.count, let first = failures.first { throw first }
        return outcomes
    }
}

/// What the routes of one `send` report, each into its own indices.
final class RouteResults: Sendable {
    struct State {
        var outcomes: [PushOutcome]
        var failures: [any Error] = []
    }

    let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(outcomes: [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: count)))
    }
}
