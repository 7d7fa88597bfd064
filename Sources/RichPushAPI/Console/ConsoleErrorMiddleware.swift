import HTTPTypes
import Hummingbird
import NIOCore

/// Answers a console error as a page when a browser asked for one (`Accept: text/html`), with
/// the same status and headers (`Retry-After`, …) as the JSON error every other client gets.
struct ConsoleErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let redirect as ConsoleRedirect {
            return ConsolePage.redirect(to: redirect.location)
        } catch {
            guard ConsolePage.wantsHTML(request) else { throw error }
            let apiError =
                (error as? APIError) ?? (error as? HTTPError).map {
                    APIError(
                        $0.status, code: ErrorMiddleware<Context>.code(for: $0.status), message: $0.body ?? $0.status.reasonPhrase,
                        headers: $0.headers)
                } ?? ErrorMiddleware<Context>.apiError(for: error, logger: context.logger, requestID: context.id)
            var response = ConsolePage.response(
                ConsolePage.layout(
                    title: "Error", session: nil,
                    body: """
                        <h1>\(String(apiError.status.code)) \(apiError.status.reasonPhrase)</h1>
                        <p class="error" role="alert">\(apiError.message)</p>
                        <p><code>\(apiError.code)</code></p>
                        <p><a href="/console">Back to the overview</a></p>
                        """), status: apiError.status)
            for field in apiError.headers where field.name != .wwwAuthenticate { response.headers[field.name] = field.value }
            return response
        }
    }
}
