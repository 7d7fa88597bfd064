import HTTPTypes
import Hummingbird

/// 405 with `Allow` for a known path called with a method it does not serve (RFC 9110 §15.5.6),
/// whatever the method (HEAD, OPTIONS, TRACE, QUERY, …), instead of the router's 404. The table
/// lists every route the API serves; a test keeps it equal to the router's.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    static let table: [(path: String, methods: [HTTPRequest.Method])] = [
        ("api/register", [.post]),
        ("api/register/:id", [.put, .delete]),
        ("api/register/:id/templates/:name", [.patch]),
        ("api/notifications", [.get, .post]),
        // Before `:id`, which the first match would otherwise take it for.
        ("api/notifications/batch", [.post]),
        ("api/notifications/missed", [.get]),
        ("api/notifications/:id", [.get, .delete]),
        ("api/notifications/:id/status", [.get]),
        ("api/notifications/:id/receipts", [.post]),
        ("api/templates/render", [.post]),
        ("api/webhooks", [.get, .post]),
        ("api/webhooks/:id", [.get, .delete]),
        ("api/webhooks/:id/attempts", [.get]),
        ("api/webhooks/:id/dead-letters", [.get]),
        ("api/webhooks/:id/dead-letters/replay", [.post]),
        ("api/apps", [.get, .post]),
        ("api/apps/:id", [.get, .patch, .delete]),
        ("media/:app/:id", [.get]),
        ("health/live", [.get]),
        ("health/ready", [.get]),
        ("metrics", [.get]),
        ("openapi.yaml", [.get]),
        ("device", [.get]),
        ("device.js", [.get]),
        ("device.css", [.get]),
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            // The router found no route for this method and path; is the path one of ours?
            guard let methods = Self.methods(forPath: request.uri.path), !methods.contains(request.method) else { throw error }
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            throw APIError(
                .methodNotAllowed, code: "method_not_allowed", message: "\(request.method.rawValue) is not served here; allowed: \(allow)",
                headers: [.allow: allow])
        }
    }

    /// The methods served at `path`, if it matches a route of the table.
    static func methods(forPath path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return table.first { route in
            let pattern = route.path.split(separator: "/")
            return pattern.count == segments.count && zip(pattern, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
        }?.methods
    }
}
