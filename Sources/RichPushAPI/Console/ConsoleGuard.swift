import HTTPTypes
import Hummingbird
import RichPushCore

/// The checks every console request that changes something passes, before it reads its body:
/// it comes from the console's own pages (CSRF), the console is not read-only, and the user's
/// role allows it. Each refusal is a 403 with a code naming it.
struct ConsoleGuard: Sendable {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    let configuration: ConsoleConfiguration

    /// The request was sent by a page of this origin. Browsers send `Origin` with every POST and
    /// `Sec-Fetch-Site` with every request; a request with neither is refused too (a script
    /// outside a browser must say where it comes from: `Origin: <the console's origin>`).
    func checkSameOrigin(_ request: Request, context: APIRequestContext) throws {
        if let site = request.headers[Self.secFetchSite], site.lowercased() != "same-origin" {
            throw APIError(
                .forbidden, code: "cross_site_request",
                message: "the console refuses a change sent from another site (Sec-Fetch-Site: \(site.prefix(20)))")
        }
        guard let origin = request.headers[.origin] else {
            guard request.headers[Self.secFetchSite] != nil else {
                throw APIError(
                    .forbidden, code: "cross_site_request", message: "the console needs an Origin or Sec-Fetch-Site header on a change")
            }
            return
        }
        let scheme = configuration.secureCookie == .always || context.forwardedHTTPS ? "https" : "http"
        guard let authority = request.head.authority, origin.lowercased() == "\(scheme)://\(authority)".lowercased() else {
            throw APIError(
                .forbidden, code: "cross_site_request", message: "the console refuses a change sent from origin \(origin.prefix(100))")
        }
    }

    /// The session's user may take an action that needs `role`, and the console takes actions.
    func checkAction(_ session: ConsoleSession, needs role: ConsoleAccess.Role) throws {
        guard !configuration.readOnly else {
            throw APIError(.forbidden, code: "console_read_only", message: "the console is read-only (richpush api --console-read-only)")
        }
        try checkRole(session, needs: role)
    }

    func checkRole(_ session: ConsoleSession, needs role: ConsoleAccess.Role) throws {
        guard session.access.role >= role else {
            throw APIError(
                .forbidden, code: "console_forbidden",
                message: "your console role, \(session.access.role.rawValue), may not do this; it needs \(role.rawValue)")
        }
    }
}
