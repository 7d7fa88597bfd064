import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore
import RichPushNH

/// Notification Hubs' routes, at the listener's root: `/{hub}/…`, a hub being an app. Served now:
/// the template send, `POST /{hub}/messages` with `ServiceBusNotification-Format: template` and a
/// `ServiceBusNotification-Tags` expression, which RichPush's own create runs (quota, limits,
/// backlog, queue) and which is answered as NH answers: 201 with the message's `Location`.
struct NHRoutes {
    /// An app's rules (none for an app that does not exist or has none).
    let rules: @Sendable (AppID) async throws -> [NHAccessRule]
    let notifications: RoutesPerApp<NotificationRoutes>
    /// Seconds since 1970, for a token's expiry.
    var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    func add(to router: Router<APIRequestContext>) {
        // Hummingbird's router matches it with and without the trailing '/' the clients differ on
        // (notificationhubs-rest-python: `messages/`, the Node SDK's Python port: `messages`).
        router.post(":hub/messages") { try await send($0, context: $1) }
    }

    func send(_ request: Request, context: APIRequestContext) async throws -> Response {
        var context = context
        let (app, rule) = try await authorize(request, context: context, needs: .send)
        context.app = app
        // The send's creator is the rule (its quota, its records): `nh.<rule>`.
        context.user = User(name: String(("nh." + rule.name).prefix(64)), role: .admin)
        guard let format = request.headers[NotificationRoutes.formatHeader] else {
            throw NHError(status: 400, code: "BadRequest", message: "ServiceBusNotification-Format is required")
        }
        guard format.lowercased() == "template" else {
            throw NHError(
                status: 400, code: "UnsupportedFormat",
                message: "ServiceBusNotification-Format '\(format.prefix(32))' is not served yet: only template sends are (docs/nh.md)")
        }
        guard request.headers[NotificationRoutes.tagsHeader] != nil else {
            throw NHError(
                status: 400, code: "UnsupportedSend",
                message: "a send without ServiceBusNotification-Tags (to every device) is not served yet (docs/nh.md)")
        }
        switch try await notifications.routes(for: app).created(request, context: context) {
        case .record(let id, _, _):
            let host = request.head.authority ?? "localhost"
            return Response(
                status: .created,
                headers: [.location: "https://\(host)/\(app.rawValue)/messages/\(id)?api-version=2015-04"])
        case .dryRun(let answer):
            return answer
        }
    }

    /// The app named by the path and the rule whose key signed the request, or NH's refusal: an
    /// unknown hub is refused as a wrong key is (its rules are none), so nothing tells hubs apart.
    private func authorize(_ request: Request, context: APIRequestContext, needs right: NHRight) async throws -> (AppID, NHAccessRule) {
        let hub = context.parameters.get("hub") ?? ""
        let app = try? AppID(hub)
        var rules: [NHAccessRule] = []
        if let app { rules = try await self.rules(app) }
        let rule = try NHAuthorizer.authorize(
            header: request.headers[.authorization], host: request.head.authority ?? "", path: request.uri.path, rules: rules,
            needs: right, now: now())
        guard let app else { throw NHError.invalidSignature }
        return (app, rule)
    }
}
