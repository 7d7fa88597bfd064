import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore
import RichPushNH

/// Notification Hubs' sends, at the listener's root: `/{hub}/…`, a hub being an app. Served now:
/// the template send, `POST /{hub}/messages` with `ServiceBusNotification-Format: template` and a
/// `ServiceBusNotification-Tags` expression (none: every device, ``NHSendTarget``), which
/// RichPush's own create runs (quota, limits, backlog, queue) and which is answered as NH answers:
/// 201 with the message's `Location`.
struct NHRoutes {
    let access: NHHubAccess
    let notifications: RoutesPerApp<NotificationRoutes>

    func add(to router: Router<APIRequestContext>) {
        // Hummingbird's router matches it with and without the trailing '/' the clients differ on
        // (notificationhubs-rest-python: `messages/`, the Node SDK's Python port: `messages`).
        router.post(":hub/messages") { try await send($0, context: $1) }
    }

    func send(_ request: Request, context: APIRequestContext) async throws -> Response {
        var context = context
        let (app, rule) = try await access.authorize(request, context: context, needs: .send)
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
        // Without tags, every device of the hub; `$UserId:{name}` is the user's tag.
        let target = try NHSendTarget.target(tagsHeader: request.headers[NotificationRoutes.tagsHeader])
        switch try await notifications.routes(for: app).created(request, context: context, target: target) {
        case .record(let id, _, _):
            let host = request.head.authority ?? "localhost"
            return Response(
                status: .created,
                headers: [.location: "https://\(host)/\(app.rawValue)/messages/\(id)?api-version=2015-04"])
        case .dryRun(let answer):
            return answer
        }
    }
}
