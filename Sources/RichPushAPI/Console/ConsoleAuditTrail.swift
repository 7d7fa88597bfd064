import RichPushStorage

/// One console action's two audit entries: `started` before it runs (no entry, no action), then
/// `ok` with how many it did, or `failed` with why and how many it had done by then.
///
/// Two halves rather than one call around the action because a bulk action that answers as it
/// goes (``ConsoleBulkAction``) writes `started` while its request can still be refused (a Redis
/// outage is then a 503 with `Retry-After`), and the end from the task that outlives the request.
struct ConsoleAuditTrail: Sendable {
    let store: RedisConsoleStore
    let user: String
    let action: String
    let target: String
    let requested: Int
    let address: String

    func started() async throws {
        try await store.audit(entry(done: 0, outcome: "started"))
    }

    /// The action's end: `ok` with `done`, or `failed: <error>` with `done`, how far it got.
    func finished(done: Int, error: (any Error)?) async throws {
        try await store.audit(entry(done: done, outcome: error.map { String("failed: \($0)".prefix(200)) } ?? "ok"))
    }

    /// Runs `body` between the two entries.
    func run(_ body: () async throws -> Int) async throws -> Int {
        try await started()
        let done: Int
        do {
            done = try await body()
        } catch {
            try await finished(done: 0, error: error)
            throw error
        }
        try await finished(done: done, error: nil)
        return done
    }

    private func entry(done: Int, outcome: String) -> RedisConsoleStore.AuditEntry {
        .init(user: user, action: action, target: target, requested: requested, done: done, address: address, outcome: outcome)
    }
}
