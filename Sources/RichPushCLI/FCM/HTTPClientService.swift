import AsyncHTTPClient
import ServiceLifecycle

/// Shuts an HTTP client down when the process's ServiceGroup stops (listed before its users).
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: shut down all the same.
        }
        try await client.shutdown()
    }
}
