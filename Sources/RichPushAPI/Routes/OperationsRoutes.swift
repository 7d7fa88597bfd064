import Foundation
import Hummingbird
import Prometheus

/// Health, metrics and the API description; no authentication.
struct OperationsRoutes {
    /// Throws when the backend does not answer.
    let ready: @Sendable () async throws -> Void
    let registry: PrometheusCollectorRegistry?
    let openAPI: [UInt8]

    func add(to router: Router<APIRequestContext>) {
        router.get("health/live") { _, _ in try JSONResponse.encode(["status": "ok"], status: .ok) }
        router.get("health/ready") { _, _ in
            do {
                try await ready()
                return try JSONResponse.encode(["status": "ok", "redis": "ok"], status: .ok)
            } catch {
                // Unauthenticated: say what is down, not where it is.
                throw APIError.unavailable("Redis does not answer", retryAfter: 1)
            }
        }
        router.get("metrics") { _, _ in
            var bytes: [UInt8] = []
            registry?.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
    }
}
