package import AsyncHTTPClient
import ServiceLifecycle

/// Shuts an HTTP client down when the process's ServiceGroup stops (listed before its users).
///
/// The worker's webhook client and the CLI's FCM token client both end this way, so it lives
/// beside the worker's composition root.
package struct HTTPClientService: Service {
    package let client: HTTPClient

    package init(client: HTTPClient) {
        self.client = client
    }

    package func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: shut down all the same.
        }
        try await client.shutdown()
    }
}
