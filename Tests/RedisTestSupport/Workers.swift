package import RichPushQueue

/// Runs in-process workers while `body` runs, then stops them gracefully (drain, flush acks).
package func withWorkers<T: Sendable>(_ workers: [JobWorker], _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in workers { group.addTask { try await worker.run() } }
        do {
            let result = try await body()
            for worker in workers { worker.stop() }
            try await group.waitForAll()
            return result
        } catch {
            for worker in workers { worker.stop() }
            try? await group.waitForAll()
            throw error
        }
    }
}

/// Runs one in-process worker while `body` runs.
package func withWorker<T: Sendable>(_ worker: JobWorker, _ body: () async throws -> T) async throws -> T {
    try await withWorkers([worker], body)
}
