import Hummingbird
import RichPushCore

/// Authentication for the operator's routes (`/api/apps`): `Authorization: Bearer <operator
/// token>`, or an admin's API key with the `manage` scope, which may read and change its own app
/// only (the app the key was made in). Passwords are never
/// accepted here, an admin's included: 401 without a Bearer token, 403 with a wrong one, and 403
/// naming the flag when the API was started without an operator token.
struct OperatorAuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let token: OperatorToken?
    /// Each app's stores, where a manage key is checked.
    let apps: AppDirectory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard case .bearer(let sent)? = Credentials(header: request.headers[.authorization]) else {
            throw APIError(
                .unauthorized, code: "unauthorized", message: "send the operator token as Authorization: Bearer <token>",
                headers: [.wwwAuthenticate: "Bearer realm=\"richpush-operator\""])
        }
        if APIKey.id(inToken: sent) != nil {
            return try await next(request, try await manager(sent, context: context))
        }
        guard let token else {
            throw APIError(
                .forbidden, code: "operator_routes_off",
                message: "the operator's routes are off: start the API with --operator-token-file (see docs/apps.md)")
        }
        guard token.accepts(sent) else {
            context.logger.notice("operator authentication failed", metadata: ["address": "\(context.clientAddress)"])
            throw APIError(.forbidden, code: "forbidden", message: "that is not the operator token")
        }
        var context = context
        context.logger[metadataKey: "operator"] = "yes"
        return try await next(request, context)
    }

    /// The context of an admin's key with `manage`, limited to its app; 403 for any other key.
    private func manager(_ token: String, context: Context) async throws -> Context {
        guard let app = APIKey.parse(token: token)?.app, try await apps.contains(app),
            let (key, user) = try await apps.stores(for: app).apiKeys.verify(token: token)
        else {
            throw APIError(.forbidden, code: "forbidden", message: "that is not a live API key")
        }
        guard key.scopes.contains(.manage), user.role == .admin else {
            throw APIError(
                .forbidden, code: "insufficient_scope",
                message: "the operator's routes take the operator token, or an admin's API key with the manage scope")
        }
        var context = context
        context.apiKey = key
        context.user = user
        context.managedApp = app.rawValue
        context.app = app
        context.logger[metadataKey: "apikey.id"] = "\(key.id)"
        return context
    }
}
