import RichPushCore

/// The test send's form and its result: each chosen device with its outcome so far.
enum TestSendPage {
    /// A device with no outcome yet.
    static let waiting = "queued"

    struct Outcome {
        let installation: String
        let state: String
        let error: String?
    }

    /// Each chosen device's state in the notification's status (`queued` until it has one).
    static func outcomes(_ devices: [String], status: NotificationStatus?) -> [Outcome] {
        let known = Dictionary((status?.devices ?? []).map { ($0.installation, $0) }, uniquingKeysWith: { first, _ in first })
        let cancelled = status?.state == .cancelled
        return devices.map { id in
            guard let device = known[id], device.state != waiting else {
                return Outcome(installation: id, state: cancelled ? "cancelled" : waiting, error: nil)
            }
            return Outcome(installation: id, state: device.state, error: device.error)
        }
    }

    static func form(app: String, canAct: Bool) -> HTML {
        guard canAct else { return "<h1>Test send</h1><p>A test send needs an operator (and a console that is not read-only).</p>" }
        return """
            <h1>Test send</h1>
            <p>Send a text push to up to \(ConsoleTestSendRoutes.maxDevices) of an app's installations and see each one's outcome. It goes through the queue and a worker like any push.</p>
            <form method="post" action="/console/test-send" class="confirm">
            <label for="t-app">App</label><input id="t-app" name="app" maxlength="32" required value="\(app)">
            <label for="t-installations">Installation ids (up to \(ConsoleTestSendRoutes.maxDevices), separated by spaces or commas)</label>
            <input id="t-installations" name="installations" maxlength="256" required autocomplete="off">
            <label for="t-message">Message (up to \(ConsoleTestSendRoutes.maxMessage) characters)</label>
            <input id="t-message" name="message" maxlength="\(ConsoleTestSendRoutes.maxMessage)" required>
            <button type="submit">Send</button>
            </form>
            """
    }

    static func result(app: String, id: Int, state: String?, outcomes: [Outcome], done: Bool) -> HTML {
        let rows: [HTML] = outcomes.map {
            "<tr><th scope=\"row\"><code>\($0.installation)</code></th><td class=\"outcome\">\($0.state)</td><td class=\"wrap\">\($0.error ?? "")</td></tr>"
        }
        return """
            <h1>Test send \(id)</h1>
            <p role="status" id="test-send-status">Notification \(id) of \(app): \(state ?? "no status yet"). \(done ? "Every device has an outcome." : "Waiting for outcomes: this page reads them again every 2 s.")</p>
            <div class="scroll"><table id="test-send"><thead><tr><th scope="col">Installation</th><th scope="col">Outcome</th><th scope="col">Error</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            <p><a href="/console/notifications?\(HTML.query([("app", app), ("id", String(id))]))">The notification's status</a> · <a href="/console/test-send?\(HTML.query([("app", app)]))">Another test send</a></p>
            """
    }
}
