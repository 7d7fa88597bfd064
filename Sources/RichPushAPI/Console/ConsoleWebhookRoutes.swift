import Foundation
import Hummingbird
import RichPushCore

/// `/console/webhooks`: an app's status webhooks (never their secrets), one webhook's recent
/// delivery attempts and dead letters, and the replay of those dead letters (an operator, audited,
/// as `POST /api/webhooks/{id}/dead-letters/replay` does: the store's own replay).
struct ConsoleWebhookRoutes: Sendable {
    let routes: ConsoleRoutes

    static let attemptsShown = 50
    static let deadLettersShown = 50

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("webhooks") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let app = try Self.app(form, session)
            let store = routes.backend.webhooks(app)
            var detail: (Webhook, [WebhookAttempt], [WebhookDeadLetter])?
            if let id = form["id"] {
                let webhook = try await Self.webhook(id, in: store, app: app)
                detail = (
                    webhook, try await store.attempts(webhook: id, limit: Self.attemptsShown),
                    try await store.deadLetters(webhook: id, limit: Self.deadLettersShown)
                )
            }
            let hooks = try await store.webhooks(owner: nil).sorted { $0.createdAt < $1.createdAt }
            if !ConsolePage.wantsHTML(request) {
                var object: [String: Any] = ["app": app.rawValue, "webhooks": hooks.map(Self.json)]
                if let (webhook, attempts, dead) = detail {
                    object["webhook"] = Self.json(webhook)
                    object["attempts"] = attempts.map { attempt in
                        [
                            "deliveryId": attempt.deliveryId, "attempt": attempt.attempt, "at": attempt.at,
                            "status": attempt.status ?? NSNull(),
                            "durationMs": attempt.durationMs, "events": attempt.events, "outcome": attempt.outcome.rawValue,
                            "error": attempt.error ?? NSNull(),
                        ] as [String: Any]
                    }
                    object["deadLetters"] = dead.map { letter in
                        [
                            "deliveryId": letter.deliveryId, "attempts": letter.attempts, "firstAttemptAt": letter.firstAttemptAt,
                            "lastAttemptAt": letter.lastAttemptAt, "lastError": letter.lastError, "events": letter.events,
                        ] as [String: Any]
                    }
                }
                return ConsolePage.json(object)
            }
            let page = WebhookPage(
                app: app.rawValue, webhooks: hooks, detail: detail,
                canAct: session.access.role >= .operator && !routes.configuration.readOnly)
            return ConsolePage.response(
                ConsolePage.layout(title: "Webhooks", session: session, readOnly: routes.configuration.readOnly, body: page.html))
        }
        console.post("webhooks/replay") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "webhook.replay", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            let app = try Self.app(form, session)
            guard let id = form["id"] else { throw APIError.badRequest("give the webhook's id", code: "missing_field") }
            let store = routes.backend.webhooks(app)
            let webhook = try await Self.webhook(id, in: store, app: app)
            let waiting = try await store.deadLetters(webhook: webhook.id, limit: 100).count
            let done = try await routes.audited(
                "webhook.replay", target: "app=\(app.rawValue) webhook=\(webhook.id)", requested: waiting, session: session,
                address: context.clientAddress
            ) {
                try await store.replayDeadLetters(webhook: webhook.id)
            }
            if !ConsolePage.wantsHTML(request) { return ConsolePage.json(["webhook": webhook.id, "replayed": done]) }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Replayed", session: session,
                    body: """
                        <h1>Replayed \(done) webhook deliver\(done == 1 ? "y" : "ies")</h1>
                        <p role="status">\(done) dead deliveries of \(webhook.id) are in line to be POSTed again now.</p>
                        <p><a href="/console/webhooks?\(HTML.query([("app", app.rawValue), ("id", webhook.id)]))">Back to the webhook</a></p>
                        """))
        }
    }

    /// The form's app (default `default`), one the user sees.
    static func app(_ form: ConsoleForm, _ session: ConsoleSession) throws -> AppID {
        let text = form["app"] ?? AppID.default.rawValue
        guard let app = AppID(validating: text) else {
            throw APIError.badRequest("app: \(AppID.problem(text) ?? "not an app id")", code: "bad_app_id")
        }
        guard session.access.sees(app: app.rawValue) else {
            throw APIError(.forbidden, code: "console_forbidden", message: "you do not see app \(app.rawValue)")
        }
        return app
    }

    static func webhook(_ id: String, in store: any WebhookStore, app: AppID) async throws -> Webhook {
        guard Webhook.isValidID(id) else { throw APIError.badRequest("id: a webhook id is wh_ and 16 hex digits", code: "bad_id") }
        guard let webhook = try await store.webhook(id: id) else { throw APIError.notFound("no webhook \(id) in app \(app.rawValue)") }
        return webhook
    }

    /// Where it POSTs, without any user, password or query the URL may carry (they can hold a token).
    static func shownURL(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "(unreadable URL)" }
        let hidden = parts.user != nil || parts.password != nil || parts.query != nil
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return (parts.string ?? "(unreadable URL)") + (hidden ? " (credentials or query hidden)" : "")
    }

    static func json(_ webhook: Webhook) -> [String: Any] {
        [
            "id": webhook.id, "owner": webhook.owner, "url": shownURL(webhook.url), "events": webhook.events.map(\.rawValue).sorted(),
            "allUsers": webhook.allUsers, "description": webhook.description, "createdAt": webhook.createdAt,
        ]
    }
}
