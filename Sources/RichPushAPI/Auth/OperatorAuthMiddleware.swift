import Hummingbird

/// Authentication for the operator's routes (`/api/apps`): `Authorization: Bearer <operator
/// token>`. Users and API keys are not operators, whatever their role: 401 without a Bearer
/// token, 403 with a wrong one, and 403 naming the flag when the API was started without one.
struct OperatorAuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let token: OperatorToken?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard case .bearer(let sent)? = Credentials(header: request.headers[.authorization]) else {
            throw APIError(.unauthorized, code: "unauthorized", message: "send the operator token as Authorization: Bearer <token>",
                           headers: [.wwwAuthenticate: "Bearer realm=\"richpush-operator\""])
        }
        guard let token else {
            throw APIError(.forbidden, code: "operator_routes_off",
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
}
