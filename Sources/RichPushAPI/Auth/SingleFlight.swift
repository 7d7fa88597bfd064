import Synchronization

/// Runs one piece of work per key at a time: callers that ask for a key already in flight await
/// the same result instead of starting it again (concurrent logins with one credential cost one
/// bcrypt check and one throttle charge, not one each).
final class SingleFlight<Value: Sendable>: Sendable {
    private let flights = Mutex<[String: Task<Value, any Error>]>([:])

    func run(_ key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = flights.withLock { flights in
            if let running = flights[key] { return running }
            // The work outlives a cancelled first caller, since others may be waiting on it.
            let task = Task { try await work() }
            flights[key] = task
            return task
        }
        defer { flights.withLock { flights in if flights[key] == task { flights[key] = nil } } }
        return try await task.value
    }
}
