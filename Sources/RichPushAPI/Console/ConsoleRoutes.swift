import HTTPTypes
import Hummingbird
import NIOCore
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushStorage

/// `/console`: the operator's console (docs/console.md). Pages are made on the server; each
/// reads the session from its cookie (signing in is the only page without one), and every
/// change passes ``ConsoleGuard`` (same origin, not read-only, the role) before its body is read.
struct ConsoleRoutes: Sendable {
    let backend: ConsoleBackend
    /// The apps' records (a pause is kept on its app's record too); nil: a backend without them.
    let apps: (any AppStore)?
    let configuration: ConsoleConfiguration
    let auth: AuthMiddleware
    let assets: (script: [UInt8], style: [UInt8])
    let liveStreams: LiveStreamSlots

    var sessions: ConsoleSessions { ConsoleSessions(backend: backend, configuration: configuration) }
    var guardian: ConsoleGuard { ConsoleGuard(configuration: configuration) }
    var search: DeadLetterSearch { DeadLetterSearch(queues: backend.queues) }

    func add(to router: Router<APIRequestContext>) {
        let console = router.group("console").add(middleware: ConsoleErrorMiddleware())
        let signIn = ConsoleSignIn(auth: auth, sessions: sessions, guardian: guardian)
        console.get("console.js") { _, _ in Self.asset(assets.script, type: "text/javascript; charset=utf-8") }
        console.get("console.css") { _, _ in Self.asset(assets.style, type: "text/css; charset=utf-8") }
        console.get("login") { request, _ in
            if try await sessions.session(of: request) != nil { return ConsolePage.redirect(to: "/console") }
            return ConsolePage.response(ConsoleSignIn.page())
        }
        console.post("login") { request, context in try await signIn.signIn(request, context: context) }
        console.post("logout") { request, context in
            try await signIn.signOut(request, context: context, session: try await session(request))
        }
        console.get("") { request, context in
            let session = try await session(request)
            let overview = try await ConsoleOverview.read(backend.queues, access: session.access, parked: try await parked())
            return ConsolePage.response(
                ConsolePage.layout(title: "Overview", session: session, readOnly: configuration.readOnly, body: overview.html))
        }
        console.get("overview.json") { request, _ in
            let session = try await session(request)
            return ConsolePage.json(try await ConsoleOverview.read(backend.queues, access: session.access, parked: try await parked()).json)
        }
        console.get("events") { request, _ in
            let session = try await session(request)
            return try ConsoleLiveStream(backend: backend, sessions: sessions, configuration: configuration, slots: liveStreams)
                .response(for: session, request: request)
        }
        ConsoleDeadLetterRoutes(routes: self).add(to: console)
        ConsoleNotificationRoutes(routes: self).add(to: console)
        ConsoleDeviceRoutes(routes: self).add(to: console)
        ConsoleQueueRoutes(routes: self).add(to: console)
        ConsoleRetryRoutes(routes: self).add(to: console)
        ConsoleWebhookRoutes(routes: self).add(to: console)
        ConsoleTestSendRoutes(routes: self).add(to: console)
        ConsoleTemplateRoutes(routes: self).add(to: console)
        console.get("audit") { request, _ in
            let session = try await session(request)
            try guardian.checkRole(session, needs: .admin)
            let entries = try await backend.store.auditLog(count: 200)
            if !ConsolePage.wantsHTML(request) { return ConsolePage.json(["entries": entries.map(Self.json)]) }
            return ConsolePage.response(
                ConsolePage.layout(title: "Audit log", session: session, readOnly: configuration.readOnly, body: Self.auditPage(entries)))
        }
    }

    /// Checks a change before its body is read (same origin, not read-only, `role`); a refusal
    /// of a signed-in user is audited too (`refused: <code>`), then answered.
    func authorizeChange(
        _ request: Request, context: APIRequestContext, session: ConsoleSession, action: String,
        needs role: ConsoleAccess.Role
    ) async throws {
        do {
            try guardian.checkSameOrigin(request, context: context)
            try guardian.checkAction(session, needs: role)
        } catch let error as APIError {
            try await backend.store.audit(
                .init(
                    user: session.user, action: action, target: "", requested: 0, done: 0, address: context.clientAddress,
                    outcome: "refused: \(error.code)"))
            throw error
        }
    }

    /// Runs `body` between two audit entries: `started` before (no entry, no action), then
    /// `ok` with how many it did, or `failed` with why.
    func audited(
        _ action: String, target: String, requested: Int, session: ConsoleSession, address: String,
        _ body: () async throws -> Int
    ) async throws -> Int {
        try await auditTrail(action, target: target, requested: requested, session: session, address: address).run(body)
    }

    func auditTrail(_ action: String, target: String, requested: Int, session: ConsoleSession, address: String) -> ConsoleAuditTrail {
        ConsoleAuditTrail(store: backend.store, user: session.user, action: action, target: target, requested: requested, address: address)
    }

    func parked() async throws -> ParkedJobs {
        try await ParkedJobs.read(backend.queues, limit: configuration.parkedScanLimit)
    }

    /// The request's session; a browser without one is sent to sign in, a script gets 401.
    func session(_ request: Request) async throws -> ConsoleSession {
        if let session = try await sessions.session(of: request) { return session }
        if ConsolePage.wantsHTML(request) && request.method == .get {
            throw ConsoleRedirect(location: "/console/login")
        }
        throw APIError(.unauthorized, code: "console_sign_in", message: "sign in to the console first (POST /console/login)")
    }

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        var headers = ConsolePage.securityHeaders
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ entry: RedisConsoleStore.AuditEntry) -> [String: Any] {
        [
            "id": entry.id, "at": entry.at, "user": entry.user, "action": entry.action, "target": entry.target,
            "requested": entry.requested,
            "done": entry.done, "address": entry.address, "outcome": entry.outcome,
        ]
    }

    static func auditPage(_ entries: [RedisConsoleStore.AuditEntry]) -> HTML {
        let rows: [HTML] = entries.map { entry in
            """
            <tr><td>\(ConsolePage.time(entry.at))</td><td>\(entry.user)</td><td>\(entry.action)</td><td class="wrap">\(entry.target)</td>\
            <td>\(entry.requested)</td><td>\(entry.done)</td><td>\(entry.outcome)</td><td>\(entry.address)</td></tr>
            """
        }
        return """
            <h1>Audit log</h1>
            <p>Every sign-in, sign-out and action, newest first (the last 200 shown; Redis keeps about 10,000).</p>
            <div class="scroll"><table id="audit"><thead><tr><th scope="col">When (UTC)</th><th scope="col">User</th><th scope="col">Action</th>\
            <th scope="col">On</th><th scope="col">Asked</th><th scope="col">Done</th><th scope="col">Outcome</th><th scope="col">Address</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="8">Nothing yet.</td></tr>"#] : rows)</tbody></table></div>
            """
    }
}

/// A browser without a session asked for a page: 303 to the sign-in page.
struct ConsoleRedirect: Error, HTTPResponseError {
    let location: String
    var status: HTTPResponse.Status { .seeOther }
    func response(from request: Request, context: some RequestContext) throws -> Response { ConsolePage.redirect(to: location) }
}
