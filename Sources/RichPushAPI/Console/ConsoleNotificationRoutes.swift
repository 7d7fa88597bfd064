import Foundation
import Hummingbird
import RichPushCore

/// `GET /console/notifications?app=…&id=…`: one notification found by its id, in an app the user
/// sees: its record (message, type, payload's type and size, creator, target, delivery options)
/// and its status (state, counts, each device's state with the platform's id and any error), as
/// the API's status route reads them. The first step of issue 29's notifications page.
struct ConsoleNotificationRoutes: Sendable {
    let routes: ConsoleRoutes

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("notifications") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let appText = form["app"] ?? AppID.default.rawValue
            guard let app = AppID(validating: appText) else { throw APIError.badRequest("app: \(AppID.problem(appText) ?? "not an app id")", code: "bad_app_id") }
            guard session.access.sees(app: app.rawValue) else {
                throw APIError(.forbidden, code: "console_forbidden", message: "you do not see app \(app.rawValue)")
            }
            var found: (RichNotification, NotificationStatus?)?
            if let text = form["id"] {
                guard let id = Int(text), id > 0 else { throw APIError.badRequest("id: a notification id is a positive integer", code: "bad_id") }
                let store = routes.backend.notifications(app)
                guard let record = try await store.notification(id: id) else {
                    throw APIError.notFound("no notification \(id) in app \(app.rawValue) (or it expired with the retention)")
                }
                found = (record, try await store.status(id: id))
            }
            if !ConsolePage.wantsHTML(request) {
                guard let (record, status) = found else { throw APIError.badRequest("give the notification's id", code: "missing_field") }
                return ConsolePage.json(Self.json(record, status))
            }
            return ConsolePage.response(ConsolePage.layout(title: "Notifications", session: session, readOnly: routes.configuration.readOnly,
                                                           body: Self.page(app: app.rawValue, id: form["id"] ?? "", found: found)))
        }
    }

    static func json(_ record: RichNotification, _ status: NotificationStatus?) -> [String: Any] {
        var object: [String: Any] = ["id": record.id, "message": record.message, "richType": record.richType.rawValue, "contentType": record.contentType,
                                     "payloadBytes": record.payloadSize, "creator": record.creator, "target": record.target, "createdAt": record.createdAt]
        if let status {
            object["state"] = status.state.rawValue
            object["counts"] = status.counts
            object["devices"] = status.devices.map { device in
                ["installation": device.installation, "state": device.state, "adapterId": device.adapterID ?? NSNull(), "error": device.error ?? NSNull()] as [String: Any]
            }
        }
        return object
    }

    static func page(app: String, id: String, found: (RichNotification, NotificationStatus?)?) -> HTML {
        var details: HTML = ""
        if let (record, status) = found {
            let counts: [HTML] = (status?.counts ?? [:]).sorted { $0.key < $1.key }.filter { $0.value > 0 }.map { "<div><dt>\($0.key)</dt><dd>\($0.value)</dd></div>" }
            let devices: [HTML] = (status?.devices ?? []).map { device in
                "<tr><th scope=\"row\"><code>\(device.installation)</code></th><td>\(device.state)</td><td><code>\(device.adapterID ?? "")</code></td><td class=\"wrap\">\(device.error ?? "")</td></tr>"
            }
            details = """
                <h2>Notification \(record.id): \(status?.state.rawValue ?? "no status")</h2>
                <dl class="record">
                <dt>Message</dt><dd>\(record.message)</dd><dt>Type</dt><dd>\(record.richType.rawValue)</dd>
                <dt>Payload</dt><dd>\(record.contentType), \(record.payloadSize) bytes</dd>
                <dt>Created by</dt><dd>\(record.creator)</dd><dt>Target</dt><dd><code>\(record.target)</code></dd>
                <dt>Created (UTC)</dt><dd>\(ConsolePage.time(record.createdAt))</dd></dl>
                \(counts.isEmpty ? [] : ["<dl class=\"totals\">" as HTML] + counts + ["</dl>" as HTML])
                <div class="scroll"><table id="devices"><thead><tr><th scope="col">Installation</th><th scope="col">State</th><th scope="col">Platform's id</th><th scope="col">Error</th></tr></thead>
                <tbody>\(devices.isEmpty ? [#"<tr class="empty"><td colspan="4">No device has an outcome yet.</td></tr>"#] : devices)</tbody></table></div>
                """
        }
        return """
            <h1>Find a notification</h1>
            <form method="get" action="/console/notifications" class="filter" role="search">
            <label for="n-app">App</label><input id="n-app" name="app" maxlength="32" value="\(app)">
            <label for="n-id">Id</label><input id="n-id" name="id" inputmode="numeric" maxlength="20" required value="\(id)">
            <button type="submit">Find</button>
            </form>
            \(details)
            """
    }
}
