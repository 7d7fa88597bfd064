import Hummingbird
import Logging

/// Logs each request at info with its method, path (never the query string, which may carry a
/// device handle), status and duration. Hummingbird's own request log prints the whole URI.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var status = "error"
        defer {
            let elapsed = ContinuousClock.now - start
            let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            context.logger.info(
                "request",
                metadata: [
                    "http.method": "\(request.method.rawValue)", "http.path": "\(request.uri.path.prefix(200).logSafe)",
                    "http.status": "\(status)", "http.duration_us": "\(micros)",
                ])
        }
        do {
            let response = try await next(request, context)
            status = "\(response.status.code)"
            return response
        } catch let error as any HTTPResponseError {
            status = "\(error.status.code)"
            throw error
        }
    }
}
