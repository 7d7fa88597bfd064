import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// Signing in to the console and out. The password goes through the API's own check
/// (``AuthMiddleware/authenticate(name:app:password:address:logger:)``): the same per (user,
/// address) and per-address throttle, the same bounded bcrypt gate (503 when full), the same
/// decoy for unknown names. A user without a console role is refused after that check, with
/// the same answer whether or not the password was right.
struct ConsoleSignIn: Sendable {
    let auth: AuthMiddleware
    let sessions: ConsoleSessions
    let guardian: ConsoleGuard

    static func page(message: String? = nil, user: String = "") -> HTML {
        let alert: HTML = message.map { "<p class=\"error\" role=\"alert\">\($0)</p>" } ?? ""
        return ConsolePage.layout(
            title: "Sign in", session: nil,
            body: """
                <h1>Sign in to the RichPush console</h1>
                \(alert)
                <form method="post" action="/console/login" class="signin">
                <label for="user">User</label><input id="user" name="user" autocomplete="username" required maxlength="64" value="\(user)">
                <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="72">
                <button type="submit">Sign in</button>
                </form>
                """)
    }

    func signIn(_ request: Request, context: APIRequestContext) async throws -> Response {
        // A sign-in form posted from another site would sign the victim in as the attacker.
        try guardian.checkSameOrigin(request, context: context)
        let form = try await ConsoleForm.body(of: request)
        guard let name = form["user"], let password = form.fields.first(where: { $0.name == "password" })?.value, !password.isEmpty else {
            return refuse(request, .badRequest, code: "missing_field", message: "give user and password", user: form["user"] ?? "")
        }
        guard auth.configuration.mode == .bcrypt else {
            throw APIError(
                .forbidden, code: "console_off", message: "the console needs real users: richpush api runs with --auth-mode demo")
        }
        do {
            _ = try await auth.authenticate(
                name: name, app: .default, password: password, address: context.clientAddress, logger: context.logger)
        } catch let error as APIError where error.status == .unauthorized {
            return refuse(request, .unauthorized, code: "unauthorized", message: "wrong user name or password", user: name)
        }
        // Read again, with the console role: the check above may have answered from its cache.
        guard let (stored, access) = try await sessions.backend.users.consoleUser(named: name), let access else {
            context.logger.notice(
                "console sign-in refused: no console role", metadata: ["user": "\(name)", "address": "\(context.clientAddress)"])
            return refuse(
                request, .forbidden, code: "no_console_role",
                message: "this user has no console role (richpush users set-role \(name) viewer|operator|admin)", user: name)
        }
        let secure = sessions.secure(context)
        let cookie = try await sessions.start(user: stored, secure: secure)
        try await sessions.backend.store.audit(
            .init(
                user: name, action: "sign-in", target: access.role.rawValue, requested: 0, done: 0,
                address: context.clientAddress))
        context.logger.info("console sign-in", metadata: ["user": "\(name)", "console.role": "\(access.role.rawValue)"])
        if ConsolePage.wantsHTML(request) { return ConsolePage.redirect(to: "/console", headers: [.setCookie: cookie]) }
        return ConsolePage.json(
            ["user": name, "role": access.role.rawValue, "apps": access.apps.map { $0 as Any } ?? NSNull()], headers: [.setCookie: cookie])
    }

    func signOut(_ request: Request, context: APIRequestContext, session: ConsoleSession) async throws -> Response {
        try guardian.checkSameOrigin(request, context: context)
        let cookie = try await sessions.end(session, secure: sessions.secure(context))
        try await sessions.backend.store.audit(
            .init(user: session.user, action: "sign-out", target: "", requested: 0, done: 0, address: context.clientAddress))
        if ConsolePage.wantsHTML(request) { return ConsolePage.redirect(to: "/console/login", headers: [.setCookie: cookie]) }
        return ConsolePage.json(["signedOut": true], headers: [.setCookie: cookie])
    }

    /// The form again with the reason (a browser), or the JSON error (a script); no
    /// `WWW-Authenticate`, which would make a browser ask for Basic credentials.
    private func refuse(_ request: Request, _ status: HTTPResponse.Status, code: String, message: String, user: String) -> Response {
        if ConsolePage.wantsHTML(request) { return ConsolePage.response(Self.page(message: message, user: user), status: status) }
        return ConsolePage.json(["error": ["code": code, "message": message]], status: status)
    }
}
