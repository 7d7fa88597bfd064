import HTTPTypes
import Hummingbird

/// CORS for the subscriber's side of the service (`POST /subscribe`, `DELETE /subscription/<id>`),
/// so that a page (RichPush's `/device`, from another origin) can be its own push client. Any
/// origin, without credentials: these requests carry none, and anything that is not a browser
/// makes them without asking. The application server's side (`POST /push/<id>`) gets no CORS: a
/// page never sends pushes. WebSockets are not subject to CORS.
struct SubscriberCORSMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let methods = Self.methods(forPath: request.uri.path), request.headers[.origin] != nil else {
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            // The preflight (Fetch standard, CORS protocol): 204 naming what may follow.
            return Response(status: .noContent, headers: [
                .accessControlAllowOrigin: "*",
                .accessControlAllowMethods: methods,
                .accessControlAllowHeaders: "Content-Type",
                .accessControlMaxAge: "600",
                .vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
            ])
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = "*"
        response.headers[.accessControlExposeHeaders] = "Location, Retry-After"
        return response
    }

    /// The methods a page may use at `path`, if it is on the subscriber's side.
    static func methods(forPath path: String) -> String? {
        if path == "/subscribe" { return "POST" }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.count == 3, segments[1] == "subscription", !segments[2].isEmpty { return "DELETE" }
        return nil
    }
}
