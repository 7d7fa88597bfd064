import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// `/console/devices`: an app's installations found by id, owner, tag, platform and token
/// prefix (``DeviceSearch``); one found by its id shows its recent pushes too. Reading only.
struct ConsoleDeviceRoutes: Sendable {
    let routes: ConsoleRoutes

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("devices") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let html = ConsolePage.wantsHTML(request)
            let filter: DeviceSearch.Filter
            do {
                filter = try DeviceSearch.Filter(form, access: session.access)
            } catch let error as APIError where html && error.status == .badRequest {
                return page(
                    session, ConsoleDevicesPage.html(form: form, found: nil, pushes: nil, problem: error.message), status: .badRequest)
            }
            // The form alone until something is asked for: listing every installation is a choice.
            let asked = form.fields.contains {
                ["id", "user", "tag", "platform", "handle", "cursor"].contains($0.name) && !$0.value.isEmpty
            }
            guard asked || !html else { return page(session, ConsoleDevicesPage.html(form: form, found: nil, pushes: nil, problem: nil)) }
            let found = try await DeviceSearch(store: routes.backend.installations(filter.app)).run(filter)
            var pushes: ConsoleDevicesPage.Pushes?
            if filter.id != nil, let device = found.installations.first {
                pushes = try await DeviceSearch.recentPushes(of: device.id, store: routes.backend.notifications(filter.app))
            }
            if !html { return ConsolePage.json(ConsoleDevicesPage.json(found, filter: filter, pushes: pushes)) }
            return page(session, ConsoleDevicesPage.html(form: form, found: (filter, found), pushes: pushes, problem: nil))
        }
    }

    func page(_ session: ConsoleSession, _ body: HTML, status: HTTPResponse.Status = .ok) -> Response {
        ConsolePage.response(
            ConsolePage.layout(title: "Devices", session: session, readOnly: routes.configuration.readOnly, body: body), status: status)
    }
}

/// The devices page: the search form, the installations found, and one device's recent pushes.
enum ConsoleDevicesPage {
    typealias Pushes = (pushes: [(record: RichNotification?, id: Int, device: NotificationStatus.Device)], looked: Int)

    static func html(
        form: ConsoleForm, found: (filter: DeviceSearch.Filter, found: DeviceSearch.Found)?, pushes: Pushes?, problem: String?
    ) -> HTML {
        let platforms: [HTML] =
            [#"<option value="">any</option>"#]
            + Platform.allCases.map { platform in
                "<option value=\"\(platform.rawValue)\"\(form["platform"]?.lowercased() == platform.rawValue ? " selected" as HTML : "")>\(platform.rawValue)</option>"
            }
        let error: HTML = problem.map { "<p class=\"error\" role=\"alert\" id=\"filter-problem\">\($0)</p>" } ?? ""
        var results: HTML = ""
        if let (filter, found) = found {
            let rows: [HTML] = found.installations.map { device in
                let link = "/console/devices?" + HTML.query([("app", filter.app.rawValue), ("id", device.id)])
                return """
                    <tr><th scope="row"><a href="\(link)"><code>\(device.id)</code></a></th><td>\(device.owner)</td><td>\(device.platform.rawValue)</td>\
                    <td><code>\(token(device.handle))</code></td><td class="wrap">\(device.tags.joined(separator: " "))</td>\
                    <td>\(device.locale ?? "")</td><td>\(ConsolePage.time(device.updatedAt))</td></tr>
                    """
            }
            var notes: [HTML] = []
            if found.limited {
                notes.append(
                    "<p class=\"note\" id=\"scan-limit\">Searched \(found.scanned) installations; refine the search (a tag or user narrows the set read) or go on.</p>"
                )
            }
            if let next = found.next {
                notes.append(
                    "<p><a href=\"/console/devices?\(HTML.query(filter.queryPairs + [("cursor", String(next))]))\" id=\"more\" rel=\"next\">More →</a></p>"
                )
            }
            results = """
                <p role="status">\(found.installations.count) found (\(found.scanned) looked at).</p>
                <div class="scroll"><table id="devices"><thead><tr><th scope="col">Installation</th><th scope="col">User</th><th scope="col">Platform</th>\
                <th scope="col">Token</th><th scope="col">Tags</th><th scope="col">Locale</th><th scope="col">Updated (UTC)</th></tr></thead>
                <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="7">No installation matches.</td></tr>"#] : rows)</tbody></table></div>
                \(notes)
                \(pushes.map { recent($0, app: filter.app) } ?? "")
                """
        }
        return """
            <h1>Devices</h1>
            <form method="get" action="/console/devices" class="filter six" role="search">
            <label for="d-app">App</label><input id="d-app" name="app" maxlength="32" value="\(form["app"] ?? AppID.default.rawValue)">
            <label for="d-id">Installation</label><input id="d-id" name="id" maxlength="128" value="\(form["id"] ?? "")">
            <label for="d-user">User</label><input id="d-user" name="user" maxlength="64" value="\(form["user"] ?? "")">
            <label for="d-tag">Tag</label><input id="d-tag" name="tag" maxlength="200" value="\(form["tag"] ?? "")">
            <label for="d-platform">Platform</label><select id="d-platform" name="platform">\(platforms)</select>
            <label for="d-handle">Token starts with</label><input id="d-handle" name="handle" maxlength="256" value="\(form["handle"] ?? "")">
            <button type="submit">Find</button>
            </form>
            \(error)
            \(results)
            """
    }

    /// A push token shortened for a table: its first 24 characters.
    static func token(_ handle: String) -> String { handle.count > 24 ? handle.prefix(24) + "…" : handle }

    static func recent(_ pushes: Pushes, app: AppID) -> HTML {
        let rows: [HTML] = pushes.pushes.map { push in
            let times = push.device.times ?? [:]
            let steps = [
                ("sent", times["at"]), ("fetched", times["fetchedAt"]), ("displayed", times["displayedAt"]), ("opened", times["openedAt"]),
            ]
            .compactMap { name, time in time.map { "\(name) \(ConsolePage.time($0))" } }.joined(separator: ", ")
            return """
                <tr><th scope="row"><a href="/console/notifications?\(HTML.query([("app", app.rawValue), ("id", String(push.id))]))">\(push.id)</a></th>\
                <td>\(push.record.map { ConsolePage.time($0.createdAt) } ?? "expired")</td><td>\(push.device.state)</td><td>\(steps)</td>\
                <td><code>\(push.device.adapterID ?? "")</code></td><td class="wrap">\(push.device.error ?? "")</td></tr>
                """
        }
        return """
            <h2>Recent pushes to this device</h2>
            <p>No record is kept per device: these are the notifications, among the app's newest \(pushes.looked) ids, whose delivery ledger names it.</p>
            <div class="scroll"><table id="pushes"><thead><tr><th scope="col">Notification</th><th scope="col">Created (UTC)</th><th scope="col">State</th>\
            <th scope="col">Steps (UTC)</th><th scope="col">Platform's id</th><th scope="col">Error</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="6">None found.</td></tr>"#] : rows)</tbody></table></div>
            """
    }

    static func json(_ found: DeviceSearch.Found, filter: DeviceSearch.Filter, pushes: Pushes?) -> [String: Any] {
        var object: [String: Any] = [
            "app": filter.app.rawValue, "scanned": found.scanned, "limited": found.limited, "next": found.next ?? NSNull(),
            "installations": found.installations.map { device in
                [
                    "id": device.id, "owner": device.owner, "platform": device.platform.rawValue, "handle": token(device.handle),
                    "tags": device.tags, "locale": device.locale ?? NSNull(), "updatedAt": device.updatedAt,
                ] as [String: Any]
            },
        ]
        if let pushes {
            object["recentPushes"] = pushes.pushes.map { push in
                [
                    "notification": push.id, "state": push.device.state, "adapterId": push.device.adapterID ?? NSNull(),
                    "error": push.device.error ?? NSNull(),
                    "times": push.device.times ?? [:],
                ] as [String: Any]
            }
            object["recentLookedAt"] = pushes.looked
        }
        return object
    }
}
