import Logging
import ServiceLifecycle

/// Runs `services` in a ServiceGroup of their own while `body` runs, then shuts them down
/// gracefully (in reverse order), as a process's group does.
func withServices<T: Sendable>(_ services: [any Service], _ body: () async throws -> T) async throws -> T {
    var logger = Logger(label: "e2e.services")
    logger.logLevel = .error
    let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            let result = try await body()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}
