import ServiceLifecycle

extension RedisClusterClient: Service {
    /// Runs until the service group shuts down, then closes every node's connections; list it
    /// before the services that use it, as a ``RedisConnectionPool``.
    package func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled instead of shut down gracefully: close all the same.
        }
        await close()
    }
}
