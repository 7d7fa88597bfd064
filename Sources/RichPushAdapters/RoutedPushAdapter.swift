public import RichPushCore

/// Sends each push through the adapter for its installation's platform (FCM for `fcm`, …), or
/// the default one, all routes at once; outcomes come back in the pushes' order. A route that
/// cannot send at all fails its own pushes as retryable, so the others' sends are kept; only when
/// every route fails does `send` throw (the job then backs off as a whole).
public struct RoutedPushAdapter: PushAdapter {
    public let name: String
    let fallback: any PushAdapter
    let routes: [Platform: any PushAdapter]

    public init(fallback: any PushAdapter, routes: [Platform: any PushAdapter]) {
        self.fallback = fallback
        self.routes = routes
        name = ([fallback.name] + routes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value.name)" }).joined(separator: "+")
    }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        var groups: [Platform?: [Int]] = [:]
        for (index, push) in pushes.enumerated() {
            let platform = routes[push.installation.platform] == nil ? nil : push.installation.platform
            groups[platform, default: []].append(index)
        }
        if groups.count == 1, let (platform, _) = groups.first {
            return try await (platform.flatMap { routes[$0] } ?? fallback).send(pushes)
        }
        var outcomes = [PushOutcome](repeating: .failed(reason: "not sent", retryable: true), count: pushes.count)
        var failures: [any Error] = []
        await withTaskGroup(of: ([Int], Result<[PushOutcome], any Error>).self) { group in
            for (platform, indices) in groups {
                let adapter = platform.flatMap { routes[$0] } ?? fallback
                let batch = indices.map { pushes[$0] }
                group.addTask {
                    do {
                        return (indices, .success(try await adapter.send(batch)))
                    } catch {
                        return (indices, .failure(error))
                    }
                }
            }
            for await (indices, result) in group {
                switch result {
                case .success(let sent):
                    for (index, outcome) in zip(indices, sent) { outcomes[index] = outcome }
                case .failure(let error):
                    failures.append(error)
                    for index in indices { outcomes[index] = .failed(reason: "\(error)", retryable: true) }
                }
            }
        }
        if failures.count == groups.count, let first = failures.first { throw first }
        return outcomes
    }
}
