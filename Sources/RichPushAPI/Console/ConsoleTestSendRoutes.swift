import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// `/console/test-send` (Azure Notification Hubs' "Test send"): an operator picks up to 10 of an
/// app's installations and a message; the console creates a notification through the app's own
/// store, as `POST /api/notifications` does, whose job names exactly those installations (as a
/// fan-out's share does; the worker sends, records and reports as for any push), and its result
/// page shows each device's outcome, read again every 2 s until each has one.
struct ConsoleTestSendRoutes: Sendable {
    let routes: ConsoleRoutes

    static let maxDevices = 10
    static let maxMessage = 200
    /// Every installation matches it: the job's named installations are the audience.
    static let target = "console-test-send || !console-test-send"
    /// Reloads the result page while outcomes are missing, without a script.
    static let refresh = HTTPField.Name("Refresh")!

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("test-send") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let app = try ConsoleWebhookRoutes.app(form, session)
            guard let text = form["id"] else {
                let canAct = session.access.role >= .operator && !routes.configuration.readOnly
                return ConsolePage.response(
                    ConsolePage.layout(
                        title: "Test send", session: session, readOnly: routes.configuration.readOnly,
                        body: TestSendPage.form(app: app.rawValue, canAct: canAct)))
            }
            guard let id = Int(text), id > 0 else {
                throw APIError.badRequest("id: a notification id is a positive integer", code: "bad_id")
            }
            let devices = try Self.installationIDs(form.all("i"), allowEmpty: true)
            let store = routes.backend.notifications(app)
            guard try await store.notification(id: id) != nil else {
                throw APIError.notFound("no notification \(id) in app \(app.rawValue)")
            }
            let status = try await store.status(id: id)
            let outcomes = TestSendPage.outcomes(devices, status: status)
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json([
                    "id": id, "app": app.rawValue, "state": status?.state.rawValue ?? NSNull(),
                    "devices": outcomes.map {
                        ["installation": $0.installation, "state": $0.state, "error": $0.error ?? NSNull()] as [String: Any]
                    },
                ])
            }
            let done = outcomes.allSatisfy { $0.state != TestSendPage.waiting }
            return ConsolePage.response(
                ConsolePage.layout(
                    title: "Test send", session: session, readOnly: routes.configuration.readOnly,
                    body: TestSendPage.result(app: app.rawValue, id: id, state: status?.state.rawValue, outcomes: outcomes, done: done)),
                headers: done ? [:] : [Self.refresh: "2"])
        }
        console.post("test-send") { request, context in
            let session = try await routes.session(request)
            try await routes.authorizeChange(request, context: context, session: session, action: "test-send", needs: .operator)
            let form = try await ConsoleForm.body(of: request)
            let app = try ConsoleWebhookRoutes.app(form, session)
            // One field of ids (space- or comma-separated, as a person types them) or repeated `id` fields.
            let typed = (form["installations"] ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" || $0 == "\r" }).map(
                String.init)
            let devices = try Self.installationIDs(typed + form.all("id"), allowEmpty: false)
            guard let message = form["message"], message.count <= Self.maxMessage else {
                throw APIError.badRequest("message: give 1 to \(Self.maxMessage) characters", code: "bad_message")
            }
            let found = Set(try await routes.backend.installations(app).installations(ids: devices).map(\.id))
            if let missing = devices.first(where: { !found.contains($0) }) {
                throw APIError.badRequest("installation \(missing) is not registered in app \(app.rawValue)", code: "unknown_installation")
            }
            var draft = NotificationDraft(
                message: message, richType: .text, contentType: "text/plain", payload: Array(message.utf8),
                creator: session.user, target: Self.target)
            draft.installations = devices
            let store = routes.backend.notifications(app)
            let id = try await routes.audited(
                "test-send", target: "app=\(app.rawValue) installations=\(devices.joined(separator: ","))", requested: devices.count,
                session: session, address: context.clientAddress
            ) {
                try await store.create(draft) { Hex.encode(SHA256.hash(data: $0)) }.id
            }
            let result = "/console/test-send?" + HTML.query([("app", app.rawValue), ("id", String(id))] + devices.map { ("i", $0) })
            if !ConsolePage.wantsHTML(request) {
                return ConsolePage.json(["id": id, "app": app.rawValue, "installations": devices, "result": result], status: .accepted)
            }
            return ConsolePage.redirect(to: result)
        }
    }

    /// 1 to ``maxDevices`` distinct installation ids (1 to 64 letters, digits or dashes), in order.
    static func installationIDs(_ given: [String], allowEmpty: Bool) throws -> [String] {
        var ids: [String] = []
        for id in given where !ids.contains(id) {
            guard (1...64).contains(id.count),
                id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") })
            else {
                throw APIError.badRequest(
                    "'\(id.prefix(64))' is not an installation id (1 to 64 letters, digits or dashes)", code: "bad_installation")
            }
            ids.append(id)
        }
        guard ids.count <= maxDevices, allowEmpty || !ids.isEmpty else {
            throw APIError.badRequest("choose 1 to \(maxDevices) installations for a test send", code: "bad_selection")
        }
        return ids
    }
}
