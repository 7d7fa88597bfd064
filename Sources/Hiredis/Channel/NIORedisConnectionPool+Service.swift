import ServiceLifecycle

extension NIORedisConnectionPool: Service {
    /// Runs until the service group shuts down, then closes every connection (list it before
    /// the services that use it, as ``RedisConnectionPool``).
    package func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled instead of shut down gracefully: close all the same.
        }
        await close()
    }
}
