import Foundation
import RichPushCore

/// The notifications pages: the search form with its results, and one notification's page
/// (record, payload, rendered pushes, each device's timeline).
enum NotificationPage {
    /// The search form, filled in from `form`; the results when there are some; a problem with
    /// the filter beside the form.
    static func search(
        form: ConsoleForm, found: (filter: NotificationSearch.Filter, found: NotificationSearch.Found)?, problem: String?
    ) -> HTML {
        let states: [HTML] =
            [#"<option value="">any</option>"#]
            + DeliveryState.allCases.map { state in
                "<option value=\"\(state.rawValue)\"\(form["state"] == state.rawValue ? " selected" as HTML : "")>\(state.rawValue)</option>"
            }
        let error: HTML = problem.map { "<p class=\"error\" role=\"alert\" id=\"filter-problem\">\($0)</p>" } ?? ""
        var results: HTML = ""
        if let (filter, found) = found {
            let rows: [HTML] = found.notifications.map { item in
                let link = "/console/notifications?" + HTML.query([("app", filter.app.rawValue), ("id", String(item.record.id))])
                return """
                    <tr><th scope="row"><a href="\(link)">\(item.record.id)</a></th><td>\(ConsolePage.time(item.record.createdAt))</td>\
                    <td>\(item.record.creator)</td><td><code>\(item.record.target)</code></td><td>\(item.state?.rawValue ?? "-")</td>\
                    <td class="wrap">\(item.record.message)</td></tr>
                    """
            }
            var notes: [HTML] = []
            if found.limited {
                notes.append(
                    "<p class=\"note\" id=\"scan-limit\">Searched the newest \(found.scanned) notification ids; refine the window (from, to) or go on to older ones.</p>"
                )
            }
            if let next = found.next {
                let link = "/console/notifications?" + HTML.query(filter.queryPairs + [("cursor", String(next))])
                notes.append("<p><a href=\"\(link)\" id=\"older\" rel=\"next\">Older →</a></p>")
            }
            results = """
                <p role="status">\(found.notifications.count) found (\(found.scanned) ids looked at).</p>
                <div class="scroll"><table id="notifications"><thead><tr><th scope="col">Id</th><th scope="col">Created (UTC)</th><th scope="col">Creator</th>\
                <th scope="col">Target</th><th scope="col">State</th><th scope="col">Message</th></tr></thead>
                <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="6">No notification matches.</td></tr>"#] : rows)</tbody></table></div>
                \(notes)
                """
        }
        return """
            <h1>Notifications</h1>
            <form method="get" action="/console/notifications" class="filter seven" role="search">
            <label for="n-app">App</label><input id="n-app" name="app" maxlength="32" value="\(form["app"] ?? AppID.default.rawValue)">
            <label for="n-id">Id</label><input id="n-id" name="id" inputmode="numeric" maxlength="19" value="\(form["id"] ?? "")">
            <label for="n-creator">Creator</label><input id="n-creator" name="creator" maxlength="64" value="\(form["creator"] ?? "")">
            <label for="n-tag">Target tag</label><input id="n-tag" name="tag" maxlength="200" value="\(form["tag"] ?? "")">
            <label for="n-state">State</label><select id="n-state" name="state">\(states)</select>
            <label for="n-from">From (UTC)</label><input id="n-from" name="from" maxlength="40" placeholder="-1h or 2026-11-26T17:00:00Z" value="\(form["from"] ?? "")">
            <label for="n-to">To (UTC)</label><input id="n-to" name="to" maxlength="40" value="\(form["to"] ?? "")">
            <button type="submit">Find</button>
            </form>
            \(error)
            \(results)
            """
    }

    static func json(_ found: NotificationSearch.Found, filter: NotificationSearch.Filter) -> [String: Any] {
        [
            "app": filter.app.rawValue, "scanned": found.scanned, "limited": found.limited, "next": found.next ?? NSNull(),
            "notifications": found.notifications.map { item in
                [
                    "id": item.record.id, "createdAt": item.record.createdAt, "creator": item.record.creator, "target": item.record.target,
                    "message": item.record.message, "state": item.state?.rawValue ?? NSNull(),
                ] as [String: Any]
            },
        ]
    }

    static func detail(_ detail: NotificationDetail) -> HTML {
        let record = detail.record
        let counts: [HTML] = (detail.status?.counts ?? [:]).sorted { $0.key < $1.key }.filter { $0.value > 0 }.map {
            "<div><dt>\($0.key)</dt><dd>\($0.value)</dd></div>"
        }
        let payload: HTML =
            ConsoleNotificationRoutes.shownInline(record.contentType)
            ? "<img src=\"\(detail.payloadPath)\" alt=\"The payload (\(record.contentType), \(record.payloadSize) bytes)\" class=\"payload\" id=\"payload\">"
            : "<p>\(record.contentType), \(record.payloadSize) bytes: <a href=\"\(detail.payloadPath)\" download id=\"payload\">download</a></p>"
        let rendered: [HTML] = detail.rendered.map { item in
            let body: HTML =
                switch item.payload {
                case .success(let json): "<pre class=\"json\">\(json)</pre>"
                case .failure(let error): "<p class=\"error\">\(error.message)</p>"
                }
            return
                "<section class=\"rendered\"><h3>\(item.format.rawValue) (\(item.platforms.joined(separator: ", ")))</h3>\(body)</section>"
        }
        let templated: HTML =
            record.properties == nil
            ? "" : "<p class=\"note\">A template send: devices with a template got their own push (its name is in the device's row).</p>"
        let more: HTML =
            (detail.status?.devices.count ?? 0) > detail.devices.count
            ? "<p class=\"note\">The first \(detail.devices.count) of \(detail.status?.devices.count ?? 0) devices shown.</p>" : ""
        return """
            <p><a href="/console/notifications?\(HTML.query([("app", detail.app.rawValue)]))">← Notifications</a></p>
            <h1>Notification \(record.id): \(detail.status?.state.rawValue ?? "no status")</h1>
            <dl class="record">
            <dt>App</dt><dd>\(detail.app.rawValue)</dd>
            <dt>Message</dt><dd>\(record.message)</dd><dt>Type</dt><dd>\(record.richType.rawValue)</dd>
            <dt>Payload</dt><dd>\(record.contentType), \(record.payloadSize) bytes</dd>
            <dt>Created by</dt><dd>\(record.creator)</dd><dt>Target</dt><dd><code>\(record.target)</code></dd>
            <dt>Created (UTC)</dt><dd>\(ConsolePage.time(record.createdAt))</dd></dl>
            \(counts.isEmpty ? [] : ["<dl class=\"totals\">" as HTML] + counts + ["</dl>" as HTML])
            <h2>Payload</h2>
            \(payload)
            <h2>Pushes as rendered</h2>
            <p>What the workers' renderer (default settings: <code>--push-mode silent</code>) makes of it, per format its devices use.</p>
            \(rendered.isEmpty ? ["<p>No device has been addressed yet.</p>" as HTML] : rendered)
            \(templated)
            <h2>Devices</h2>
            <p>Each device's steps with their times (UTC). Queued is when the notification was created; “yes” is a step recorded before its time was kept.</p>
            \(more)
            \(timeline(detail))
            """
    }

    static func timeline(_ detail: NotificationDetail) -> HTML {
        let failed: Set<String> = [
            DeliveryCounter.failed.rawValue, DeliveryCounter.invalidToken.rawValue, DeliveryCounter.retried.rawValue,
            DeliveryCounter.expired.rawValue, "sending", "queued",
        ]
        let rows: [HTML] = detail.devices.map { device in
            let times = device.times ?? [:]
            let rank = DeliveryState(rawValue: device.state).map { DeliveryState.allCases.firstIndex(of: $0) ?? 0 } ?? 0
            func step(_ time: Int64?, reached: Bool) -> HTML {
                if let time { return "<td>\(ConsolePage.time(time))</td>" }
                return reached ? "<td>yes</td>" : "<td>-</td>"
            }
            let sent: HTML =
                failed.contains(device.state) && times["displayedAt"] == nil
                ? "<td class=\"error\">\(device.state)\(times["at"].map { " " + ConsolePage.time($0) } ?? "")</td>"
                : step(times["at"], reached: true)
            let platform = detail.installations[device.installation]?.platform.rawValue ?? "?"
            return """
                <tr><th scope="row"><a href="/console/devices?\(HTML.query([("app", detail.app.rawValue), ("id", device.installation)]))"><code>\(device.installation)</code></a></th>\
                <td>\(platform)</td><td>\(ConsolePage.time(detail.record.createdAt))</td>\(sent)\
                \(step(times["fetchedAt"], reached: detail.fetched.contains(device.installation)))\
                \(step(times["displayedAt"], reached: rank >= DeliveryState.allCases.firstIndex(of: .displayed)!))\
                \(step(times["openedAt"], reached: device.state == DeliveryState.opened.rawValue))\
                <td><code>\(device.adapterID ?? "")</code></td><td class="wrap">\(device.strategy ?? "")</td>\
                <td class="wrap">\(device.error ?? "")\(device.template.map { " template \($0)" } ?? "")</td></tr>
                """
        }
        return """
            <div class="scroll"><table id="timeline"><thead><tr><th scope="col">Installation</th><th scope="col">Platform</th><th scope="col">Queued</th>\
            <th scope="col">Sent</th><th scope="col">Fetched</th><th scope="col">Displayed</th><th scope="col">Opened</th><th scope="col">Platform's id</th>\
            <th scope="col">Delivery</th><th scope="col">Error</th></tr></thead>
            <tbody>\(rows.isEmpty ? [#"<tr class="empty"><td colspan="10">No device has an outcome yet.</td></tr>"#] : rows)</tbody></table></div>
            """
    }
}
