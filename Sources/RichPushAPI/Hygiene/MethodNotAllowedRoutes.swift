import HTTPTypes
import Hummingbird

/// 405 with `Allow` for a known path called with a method it does not serve (RFC 9110 §15.5.6),
/// instead of the router's 404. The table lists every route the API serves.
enum MethodNotAllowedRoutes {
    static let table: [(path: String, methods: [HTTPRequest.Method])] = [
        ("api/register", [.post]),
        ("api/register/:id", [.put, .delete]),
        ("api/notifications", [.get, .post]),
        ("api/notifications/:id", [.get]),
        ("api/notifications/:id/status", [.get]),
        ("api/notifications/:id/receipts", [.post]),
        ("health/live", [.get]),
        ("health/ready", [.get]),
        ("metrics", [.get]),
        ("openapi.yaml", [.get]),
    ]

    static let candidates: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch]

    static func add(to router: Router<APIRequestContext>) {
        for (path, methods) in table {
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            for method in candidates where !methods.contains(method) {
                router.on(RouterPath(path), method: method) { _, _ -> Response in
                    throw APIError(.methodNotAllowed, code: "method_not_allowed", message: "\(method.rawValue) is not served here; allowed: \(allow)", headers: [.allow: allow])
                }
            }
        }
    }
}
