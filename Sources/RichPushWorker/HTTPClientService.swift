public import AsyncHTTPClient
public import ServiceLifecycle

/// Shuts an HTTP client down when the process's ServiceGroup stops (listed before its users).
///
/// The worker's webhook client and the CLI's FCM token client both end this way, so it lives
/// beside the worker's composition root.
public struct HTTPClientService: Service {
    public let client: HTTPClient

    public init(client: HTTPClient) {
        self.client = client
    }

    public func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: shut down all the same.
        }
        try await client.shutdown()
    }
}
