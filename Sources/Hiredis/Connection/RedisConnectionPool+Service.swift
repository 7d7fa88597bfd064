import ServiceLifecycle

extension RedisConnectionPool: Service {
    /// Runs until the service group shuts down, then closes every connection. List the pool
    /// before the services that use it: a `ServiceGroup` stops its services in reverse order, so
    /// the pool closes after the last of them is done.
    package func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled instead of shut down gracefully: close all the same.
        }
        await close()
    }
}
