import HTTPTypes
import Hummingbird

/// `Cache-Control: no-store` on every answer to a request that carried credentials or needed
/// them (every path under `/api` and `/console`), errors included: what one caller may see must stay in no
/// cache, shared or the browser's, for the next one. An answer that chose its own caching keeps
/// it: a payload (`private, max-age=3600`) is immutable by content hash, and the device that
/// fetched it keeps it and revalidates it with its ETag.
struct NoStoreMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isAuthenticated(request) else { return try await next(request, context) }
        do {
            var response = try await next(request, context)
            if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
            return response
        } catch var error as APIError {
            if error.headers[.cacheControl] == nil { error.headers[.cacheControl] = "no-store" }
            throw error
        }
    }

    /// Whether the request carries credentials or its route needs them.
    static func isAuthenticated(_ request: Request) -> Bool {
        let path = request.uri.path
        return request.headers[.authorization] != nil || path == "/api" || path.hasPrefix("/api/") || path == "/console"
            || path.hasPrefix("/console/")
    }
}
